#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Embed varlink interface files in a C source that defines varlink/idl.h: each text verbatim
(for GetInterfaceDescription), and the parameters of each method as tables of fields, nested
structs included, so that the service checks every call against the IDL itself; and a header
naming every interface and method (enum vl_idl_interface_id, enum vl_idl_method_id), so that the
service dispatches a call on the method the IDL declares without comparing names again, and every
field name of the parameters (enum vl_idl_field_id, with VL_IDL_OBJECTS_MAX), so that the
handlers read each field from the map the check made without looking for its name again.

Usage: embed-idl.py OUTPUT.c OUTPUT.h FILE.varlink...

Each file must be named after the interface it declares (io.timerd.Timer.varlink declares
`interface io.timerd.Timer`); the order of the files is the order of vl_idl_interfaces.
"""

import pathlib
import re
import sys

INTERFACE_LINE = re.compile(r"^interface\s+(\S+)\s*$", re.MULTILINE)
TOKEN = re.compile(r"\s*(->|\[\]|\[string\]|[(),:?]|[A-Za-z_][A-Za-z0-9_.]*)")


def interface_name(path, text):
    match = INTERFACE_LINE.search(text)
    if not match:
        sys.exit(f"{path}: no interface line")
    name = match.group(1)
    if path.name != name + ".varlink":
        sys.exit(f"{path}: declares interface {name}, so it must be named {name}.varlink")
    return name


class Parser:
    """The varlink grammar, enough to know the fields of each method's parameters."""

    def __init__(self, path, text):
        self.path = path
        text = re.sub(r"#[^\n]*", "", text)
        self.tokens = []
        pos = 0
        while text[pos:].strip():
            match = TOKEN.match(text, pos)
            if not match:
                sys.exit(f"{path}: cannot read the IDL at {text[pos:pos + 40]!r}")
            self.tokens.append(match.group(1))
            pos = match.end()
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected=None):
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            sys.exit(f"{self.path}: expected {expected or 'more'}, found {token}")
        self.pos += 1
        return token

    def type_(self):
        """("int"|"other"|"enum", None), ("struct", fields), ("array", element) or ("named", name);
        a nullable type is its element's."""
        token = self.peek()
        if token == "?":
            self.take()
            return self.type_()
        if token in ("[]", "[string]"):
            self.take()
            element = self.type_()
            return ("array", element) if token == "[]" else ("other", None)
        if token == "(":
            return self.struct_or_enum()
        name = self.take()
        if name == "int":
            return ("int", None)
        if name in ("bool", "float", "string", "object"):
            return ("other", None)
        return ("named", name)

    def struct_or_enum(self):
        self.take("(")
        fields, is_enum = [], False
        while self.peek() != ")":
            name = self.take()
            if self.peek() == ":":
                self.take()
                fields.append((name, self.type_()))
            else:
                is_enum = True
            if self.peek() == ",":
                self.take()
        self.take(")")
        return ("enum", None) if is_enum else ("struct", fields)

    def members(self):
        """The interface's named types and the parameter fields of its methods."""
        types, methods = {}, {}
        self.take("interface")
        self.take()
        while self.peek() is not None:
            keyword, name = self.take(), self.take()
            if keyword == "type":
                types[name] = self.type_()
            elif keyword == "method":
                methods[name] = self.struct_or_enum()[1]
                self.take("->")
                self.struct_or_enum()
            elif keyword == "error":
                self.struct_or_enum()
            else:
                sys.exit(f"{self.path}: unknown member {keyword}")
        return types, methods


class FieldTables:
    """C tables of struct fields for one interface; a named type gets one table."""

    def __init__(self, prefix, types, field_names):
        self.prefix, self.types, self.field_names = prefix, types, field_names
        self.tables, self.lines = {}, []
        self.objects = {}  # of each table: the objects a value of it holds, itself included

    def resolve(self, type_):
        """The type with names replaced by what they name, and the last name seen."""
        name = None
        while type_[0] == "named":
            name = type_[1]
            if name not in self.types:
                sys.exit(f"{self.prefix}: unknown type {name}")
            type_ = self.types[name]
        return type_, name

    def field(self, name, type_):
        """The field's C initializer, and its struct's table (None when it is no struct)."""
        type_, type_name = self.resolve(type_)
        array = type_[0] == "array"
        if array:
            type_, type_name = self.resolve(type_[1])
        if array and type_[0] == "struct":
            # Each struct value of a call gets a field map of its own (params_check), so that a
            # call holds a bounded number: VL_IDL_OBJECTS_MAX.
            sys.exit(f"{self.prefix}: {name}: an array of structs in parameters")
        kind = {"int": "VL_IDL_INT", "struct": "VL_IDL_STRUCT"}.get(type_[0], "VL_IDL_OTHER")
        table = self.table(type_[1], type_name) if type_[0] == "struct" else None
        self.field_names.add(name)
        first, last = name_words(name.encode())
        return (f'{{"{name}", {len(name)}, {{{first:#x}, {last:#x}}}, {field_id(name)}, {kind}, '
                f'{"true" if array else "false"}, {"&" + table if table else "NULL"}}}', table)

    def table(self, fields, type_name=None):
        key = type_name or id(fields)
        if key in self.tables:
            if self.tables[key] not in self.objects:
                sys.exit(f"{self.prefix}: {type_name} holds itself: no bound on a call's objects")
            return self.tables[key]
        c_name = f"{self.prefix}_{type_name or len(self.tables)}"
        self.tables[key] = c_name
        described = [self.field(name, type_) for name, type_ in fields]
        entries = [entry for entry, _ in described]
        self.objects[c_name] = 1 + sum(self.objects[table] for _, table in described if table)
        if len(entries) > FIELDS_MAX:
            sys.exit(f"{c_name}: more than {FIELDS_MAX} fields (VL_IDL_FIELDS_MAX)")
        if entries:
            self.lines += [f"static const struct vl_idl_field {c_name}_fields[] = {{"]
            self.lines += [f"        {entry}," for entry in entries] + ["};"]
        fields_c = f"{c_name}_fields" if entries else "NULL"
        self.lines += [f"static const struct vl_idl_struct {c_name} = {{{len(entries)}, "
                       f"{fields_c}}};", ""]
        return c_name


# VL_IDL_FIELDS_MAX of varlink/idl.h: a call's check marks each field seen in one 64-bit word;
# VL_VIEW_FIELDS_MAX of varlink/view.h: a field map has a place for each field name.
FIELDS_MAX = 64


def name_words(name):
    """vl_idl_name_words() of varlink/idl.h: the first and the last 8 bytes of a name (4 of one
    of 4 to 7 bytes; the first, middle and last byte of a shorter one), read little-endian."""
    n = len(name)
    if n >= 8:
        return int.from_bytes(name[:8], "little"), int.from_bytes(name[n - 8:], "little")
    if n >= 4:
        return int.from_bytes(name[:4], "little"), int.from_bytes(name[n - 4:], "little")
    if n > 0:
        return name[0] | name[n // 2] << 8 | name[n - 1] << 16, 0
    return 0, 0


def field_id(name):
    """The enum vl_idl_field_id of a field name: one for every field of that name."""
    return "VL_IDL_FIELD_" + name.upper()


def method_tables(interfaces):
    """C lines defining the tables, (method, table, interface) for each method of every
    interface, the names of the parameters' fields at any depth, and the most objects (structs,
    the parameters included) one call's parameters hold."""
    lines, methods, field_names, objects = [], [], set(), 1
    for name, text in interfaces:
        types, members = Parser(name, text).members()
        tables = FieldTables(name.replace(".", "_"), types, field_names)
        for method, fields in members.items():
            table = tables.table(fields, "method_" + method)
            methods.append((f"{name}.{method}", table, name))
            objects = max(objects, tables.objects[table])
        lines += tables.lines
    if len(field_names) > FIELDS_MAX:
        sys.exit(f"more than {FIELDS_MAX} field names (VL_VIEW_FIELDS_MAX)")
    return lines, methods, sorted(field_names), objects


def c_identifier(qualified):
    """VL_..._NAME for io.timerd.Timer.AcknowledgeSignals: IO_TIMERD_TIMER_ACKNOWLEDGE_SIGNALS."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", qualified).replace(".", "_")
    return words.upper()


def unique_identifiers(prefix, names):
    """The C identifier of each name, refused when two names would share one."""
    identifiers = [prefix + c_identifier(name) for name in names]
    if len(set(identifiers)) != len(identifiers):
        sys.exit(f"two names map to one C identifier among {names}")
    return identifiers


def method_lookup(methods, method_ids):
    """vl_idl_method_find(): the method's length picks a few candidates, one memcmp each."""
    by_length = {}
    for index, (method, _, _) in enumerate(methods):
        by_length.setdefault(len(method.encode()), []).append(index)
    lines = [
        "const struct vl_idl_method *vl_idl_method_find(const char *name, size_t len)",
        "{",
        "        switch (len) {",
    ]
    for length in sorted(by_length):
        lines.append(f"        case {length}:")
        for index in by_length[length]:
            lines.append(f'                if (memcmp(name, "{methods[index][0]}", {length}) == 0)')
            lines.append(f"                        return &vl_idl_methods[{method_ids[index]}];")
        lines.append("                return NULL;")
    lines += ["        default:", "                return NULL;", "        }", "}", ""]
    return lines


def header(sources, interface_ids, method_ids, field_names, objects):
    lines = [
        "/* Generated by varlink/embed-idl.py from " + sources + ". Do not edit. */",
        "#pragma once",
        "",
        "/* Each interface of the IDL, in the order of vl_idl_interfaces. */",
        "enum vl_idl_interface_id {",
    ]
    lines += [f"        {i}," for i in interface_ids]
    lines += ["        _VL_IDL_INTERFACE_MAX,", "};", "",
              "/* Each method of the IDL: VL_IDL_<INTERFACE>_<METHOD>, words split at capitals. */",
              "enum vl_idl_method_id {"]
    lines += [f"        {m}," for m in method_ids]
    lines += ["        _VL_IDL_METHOD_MAX,", "};", "",
              "/* Each name a field of a method's parameters has, at any depth: the handlers read",
              " * a call's fields by these, from the map params_check() makes (varlink/view.h). */",
              "enum vl_idl_field_id {"]
    lines += [f"        {field_id(name)}," for name in field_names]
    lines += ["        _VL_IDL_FIELD_MAX,", "};", "",
              "/* The most objects one call's parameters hold: the parameters and their structs. */",
              f"#define VL_IDL_OBJECTS_MAX {objects}", ""]
    return lines


def c_string(text):
    """A C string literal, one source line per line of text."""
    out = []
    for line in text.splitlines(keepends=True):
        chars = []
        for ch in line:
            if ch == "\n":
                chars.append("\\n")
            elif ch in "\\\"?":  # '?' too: no trigraph can form
                chars.append("\\" + ch)
            elif " " <= ch <= "~":
                chars.append(ch)
            else:
                chars.extend(f"\\{byte:03o}" for byte in ch.encode())
        out.append('        "' + "".join(chars) + '"')
    return "\n".join(out) if out else '        ""'


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    output, output_h = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    interfaces = []
    for arg in sys.argv[3:]:
        path = pathlib.Path(arg)
        text = path.read_text(encoding="utf-8")
        interfaces.append((interface_name(path, text), text))

    names = [name for name, _ in interfaces]
    if len(set(names)) != len(names):
        sys.exit("an interface is given twice")

    table_lines, methods, field_names, objects = method_tables(interfaces)
    interface_ids = unique_identifiers("VL_IDL_", names)
    method_ids = unique_identifiers("VL_IDL_", [method for method, _, _ in methods])
    if set(interface_ids) & set(method_ids):
        sys.exit("an interface and a method map to one C identifier")
    sources = ", ".join(pathlib.Path(a).name for a in sys.argv[3:])
    lines = [
        "/* Generated by varlink/embed-idl.py from " + sources + ". Do not edit. */",
        "",
        "#include <stdbool.h>",
        "#include <stddef.h>",
        "#include <string.h>",
        "",
        '#include "varlink/idl.h"',
        "",
    ]
    lines += table_lines
    lines += ["const struct vl_idl_method vl_idl_methods[] = {"]
    for (method, table, interface), method_id in zip(methods, method_ids):
        lines.append(f'        [{method_id}] = {{"{method}", {len(method.encode())}, {method_id}, '
                     f"{interface_ids[names.index(interface)]}, &{table}}},")
    lines += ["};", ""]
    lines += method_lookup(methods, method_ids)
    lines += ["const char *const vl_idl_interfaces[] = {"]
    lines += [f'        "{name}",' for name in names]
    lines += ["        NULL,", "};", "", "static const char *const descriptions[] = {"]
    for _, text in interfaces:
        lines += [c_string(text) + ","]
    lines += [
        "};",
        "",
        "const char *vl_idl_lookup(const char *interface)",
        "{",
        "        for (size_t i = 0; vl_idl_interfaces[i]; i++)",
        "                if (strcmp(vl_idl_interfaces[i], interface) == 0)",
        "                        return descriptions[i];",
        "        return NULL;",
        "}",
        "",
    ]
    output.write_text("\n".join(lines), encoding="utf-8")
    output_h.write_text("\n".join(header(sources, interface_ids, method_ids, field_names,
                                        objects)), encoding="utf-8")


if __name__ == "__main__":
    main()
