/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "varlink/idl.h"
#include "varlink/message.h"
#include "varlink/names.h"

static char *read_source(const char *file_name)
{
        char path[4096];
        char *text;
        FILE *f;
        long size;

        snprintf(path, sizeof(path), "%s/%s", VARLINK_SOURCE_DIR, file_name);
        f = fopen(path, "re");
        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size > 0);
        rewind(f);
        text = malloc((size_t)size + 1);
        assert_non_null(text);
        assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
        text[size] = 0;
        assert_int_equal(fclose(f), 0);
        return text;
}

/* Each interface is served byte for byte as its .varlink file. */
static void served_verbatim(void **state)
{
        static const char *const interfaces[] = {VL_INTERFACE_SERVICE, VL_INTERFACE_TIMER,
                                                 VL_INTERFACE_STATUS, VL_INTERFACE_TEST};

        (void)state;
        for (size_t i = 0; i < sizeof(interfaces) / sizeof(interfaces[0]); i++) {
                char file_name[256];
                char *expected;

                snprintf(file_name, sizeof(file_name), "%s.varlink", interfaces[i]);
                expected = read_source(file_name);
                assert_non_null(vl_idl_lookup(interfaces[i]));
                assert_string_equal(vl_idl_lookup(interfaces[i]), expected);
                free(expected);
        }
}

static void interface_list(void **state)
{
        (void)state;
        assert_string_equal(vl_idl_interfaces[0], VL_INTERFACE_SERVICE);
        assert_string_equal(vl_idl_interfaces[1], VL_INTERFACE_TIMER);
        assert_string_equal(vl_idl_interfaces[2], VL_INTERFACE_STATUS);
        /* Embedded for every instance; the service serves it only on a virtual clock. */
        assert_string_equal(vl_idl_interfaces[3], VL_INTERFACE_TEST);
        assert_null(vl_idl_interfaces[4]);
}

static void unknown_interface(void **state)
{
        static const char *const unknown[] = {
            "",
            "io.timerd",
            "io.timerd.timer",
            "io.timerd.Timer.List",
            "io.timerd.Timerx",
            "org.varlink",
            "com.example.Other",
        };

        (void)state;
        for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
                assert_null(vl_idl_lookup(unknown[i]));
}

/* Each "method Name" of an interface's .varlink file, qualified, into names[*n...]. */
static void idl_methods(const char *interface, char names[][128], size_t cap, size_t *n)
{
        char file_name[256];
        char *text;

        snprintf(file_name, sizeof(file_name), "%s.varlink", interface);
        text = read_source(file_name);
        for (const char *line = text; line; line = strchr(line, '\n')) {
                size_t len;

                line += *line == '\n';
                if (strncmp(line, "method ", strlen("method ")) != 0)
                        continue;
                line += strlen("method ");
                len = strcspn(line, "( \n");
                assert_true(*n < cap);
                snprintf(names[(*n)++], 128, "%s.%.*s", interface, (int)len, line);
        }
        free(text);
}

/* Every method the .varlink files declare has its entry, found by its name: the dispatch's one
 * list is generated from the IDL. */
static void every_method_is_found(void **state)
{
        char names[64][128];
        size_t n = 0;

        (void)state;
        for (const char *const *i = vl_idl_interfaces; *i; i++)
                idl_methods(*i, names, sizeof(names) / sizeof(names[0]), &n);
        assert_int_equal(n, _VL_IDL_METHOD_MAX);
        for (size_t i = 0; i < n; i++) {
                const struct vl_idl_method *m = vl_idl_method_find(names[i], strlen(names[i]));

                assert_non_null(m);
                assert_string_equal(m->name, names[i]);
                assert_int_equal(m->len, strlen(names[i]));
                assert_ptr_equal(m, &vl_idl_methods[m->id]);
                assert_non_null(m->parameters);
                /* Its interface is the one whose file declares it. */
                assert_true(strncmp(names[i], vl_idl_interfaces[m->interface],
                                    strlen(vl_idl_interfaces[m->interface])) == 0);
                assert_int_equal(names[i][strlen(vl_idl_interfaces[m->interface])], '.');
        }
        assert_int_equal(vl_idl_methods[VL_IDL_IO_TIMERD_TIMER_REGISTER].interface,
                         VL_IDL_IO_TIMERD_TIMER);
        assert_int_equal(vl_idl_methods[VL_IDL_IO_TIMERD_TEST_NOW].interface,
                         VL_IDL_IO_TIMERD_TEST);
}

/* A prefix or an extension of a method's name is not that method: another one, or none. */
static void near_names_are_not_found(void **state)
{
        (void)state;
        for (size_t i = 0; i < _VL_IDL_METHOD_MAX; i++) {
                const struct vl_idl_method *m = &vl_idl_methods[i];
                char longer[160];

                /* A call's reader skips the grammar's check for a name the IDL knows. */
                assert_true(vl_method_name_valid(m->name));
                for (size_t len = 0; len < m->len; len++) {
                        const struct vl_idl_method *found = vl_idl_method_find(m->name, len);

                        if (found)
                                assert_true(found->len == len && found != m &&
                                            strncmp(found->name, m->name, len) == 0);
                }
                snprintf(longer, sizeof(longer), "%sX", m->name);
                assert_null(vl_idl_method_find(longer, strlen(longer)));
                snprintf(longer, sizeof(longer), "%s.Get", m->name);
                assert_null(vl_idl_method_find(longer, strlen(longer)));
                /* The same length, one byte off, at each end. */
                snprintf(longer, sizeof(longer), "%s", m->name);
                longer[m->len - 1] ^= 0x20;
                assert_null(vl_idl_method_find(longer, m->len));
                longer[m->len - 1] ^= 0x20;
                longer[0] ^= 0x20;
                assert_null(vl_idl_method_find(longer, m->len));
        }
        /* io.timerd.Test.Advance is a prefix of AdvanceTo, and found as itself. */
        assert_ptr_equal(
            vl_idl_method_find("io.timerd.Test.AdvanceTo", strlen("io.timerd.Test.Advance")),
            &vl_idl_methods[VL_IDL_IO_TIMERD_TEST_ADVANCE]);
        assert_null(
            vl_idl_method_find("io.timerd.Timer.register", strlen("io.timerd.Timer.register")));
        assert_null(vl_idl_method_find("", 0));
}

/* The objects a value of type holds (itself included), checking each field's id on the way: one
 * id per name (names[id]), none past the enum. */
static size_t field_objects(const struct vl_idl_struct *type, const char *names[])
{
        size_t objects = 1;

        for (size_t f = 0; f < type->n_fields; f++) {
                const struct vl_idl_field *field = &type->fields[f];

                assert_true((unsigned)field->id < _VL_IDL_FIELD_MAX);
                assert_int_equal(strlen(field->name), field->len);
                if (!names[field->id])
                        names[field->id] = field->name;
                assert_string_equal(names[field->id], field->name);
                if (field->kind != VL_IDL_STRUCT)
                        continue;
                /* Each struct of a call gets a map of its own: none in an array. */
                assert_false(field->array);
                objects += field_objects(field->fields, names);
        }
        return objects;
}

/* The field ids the handlers read a call's maps by: each names one field name, every id is some
 * field's, and VL_IDL_OBJECTS_MAX is the most maps a call needs. */
static void field_ids_name_the_fields(void **state)
{
        const char *names[_VL_IDL_FIELD_MAX] = {0};
        size_t most = 0;

        (void)state;
        for (size_t m = 0; m < _VL_IDL_METHOD_MAX; m++) {
                size_t objects = field_objects(vl_idl_methods[m].parameters, names);

                most = objects > most ? objects : most;
        }
        assert_int_equal(most, VL_IDL_OBJECTS_MAX);
        for (size_t id = 0; id < _VL_IDL_FIELD_MAX; id++) {
                assert_non_null(names[id]);
                for (size_t other = 0; other < id; other++)
                        assert_string_not_equal(names[id], names[other]);
        }
        assert_string_equal(names[VL_IDL_FIELD_DECLARATION], "declaration");
        assert_string_equal(names[VL_IDL_FIELD_CADENCE_USEC], "cadence_usec");
}

/* Each field of type (and of its structs) found by its name, and no name one byte off or one byte
 * longer or shorter found as it: the words embed-idl.py wrote are the words of the name. */
static void fields_found(const struct vl_idl_struct *type)
{
        for (size_t i = 0; i < type->n_fields; i++) {
                const struct vl_idl_field *field = &type->fields[i];
                char key[80];
                size_t found;

                assert_true(field->len + 2 <= sizeof(key));
                memcpy(key, field->name, field->len + 1);
                assert_int_equal(vl_idl_field_index(type, key, field->len), i);
                for (size_t k = 0; k < field->len; k++) {
                        key[k] ^= 0x01;
                        found = vl_idl_field_index(type, key, field->len);
                        assert_true(found == type->n_fields ||
                                    strncmp(type->fields[found].name, key, field->len) == 0);
                        key[k] ^= 0x01;
                }
                key[field->len] = 'x';
                found = vl_idl_field_index(type, key, field->len + 1);
                assert_true(found == type->n_fields || type->fields[found].len == field->len + 1);
                found = vl_idl_field_index(type, key, field->len - 1);
                assert_true(found == type->n_fields || type->fields[found].len == field->len - 1);
                if (field->fields)
                        fields_found(field->fields);
        }
}

static void field_names_are_found(void **state)
{
        (void)state;
        for (size_t m = 0; m < _VL_IDL_METHOD_MAX; m++)
                fields_found(vl_idl_methods[m].parameters);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(served_verbatim),          cmocka_unit_test(interface_list),
            cmocka_unit_test(unknown_interface),        cmocka_unit_test(every_method_is_found),
            cmocka_unit_test(near_names_are_not_found), cmocka_unit_test(field_ids_name_the_fields),
            cmocka_unit_test(field_names_are_found),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
