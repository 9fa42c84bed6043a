/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "varlink/view.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

enum vl_token_type vl_view_type(const struct vl_view *v)
{
        return v->tokens ? (enum vl_token_type)v->tokens[v->index].type : VL_TOKEN_OBJECT;
}

int vl_view_string(const struct vl_view *v, const char **ret)
{
        const char *s;

        if (vl_view_type(v) != VL_TOKEN_STRING)
                return -EINVAL;
        s = v->text + v->tokens[v->index].start;
        /* "a\u0000b": a C string cannot hold it. */
        if (v->tokens[v->index].nul)
                return -EINVAL;
        *ret = s;
        return 0;
}

int vl_view_u64(const struct vl_view *v, uint64_t *ret)
{
        return v->tokens ? vl_token_u64(v->text, &v->tokens[v->index], ret) : -EINVAL;
}

int vl_view_bool(const struct vl_view *v, bool *ret)
{
        return v->tokens ? vl_token_bool(&v->tokens[v->index], ret) : -EINVAL;
}

struct vl_view vl_view_first(const struct vl_view *array)
{
        return (struct vl_view){array->text, array->tokens, array->index + 1, NULL};
}

struct vl_view vl_view_following(const struct vl_view *element)
{
        return (struct vl_view){element->text, element->tokens,
                                element->tokens[element->index].next, NULL};
}

size_t vl_view_size(const struct vl_view *v)
{
        return v->tokens ? v->tokens[v->index].size : 0;
}

int vl_view_member(const struct vl_view *object, const char *key, struct vl_view *ret)
{
        int i;

        if (!object->tokens)
                return -ENOENT;
        i = vl_token_member(object->text, object->tokens, object->index, key);
        if (i < 0 || object->tokens[i].type == VL_TOKEN_NULL)
                return -ENOENT;
        *ret = (struct vl_view){object->text, object->tokens, (size_t)i, NULL};
        return 0;
}

int vl_view_field(const struct vl_view *object, unsigned field, struct vl_view *ret)
{
        const struct vl_view_fields *f = object->fields;
        size_t i;

        if (!object->tokens)
                return -ENOENT;
        /* A call is read only after its check made the map. */
        assert(f && field < VL_VIEW_FIELDS_MAX);
        if (!(f->present & UINT64_C(1) << field))
                return -ENOENT;
        i = f->value[field];
        if (object->tokens[i].type == VL_TOKEN_NULL)
                return -ENOENT;
        *ret = (struct vl_view){object->text, object->tokens, i, f->object[field]};
        return 0;
}

int vl_view_get_string(const struct vl_view *object, unsigned field, const char **ret)
{
        struct vl_view v;
        int r = vl_view_field(object, field, &v);

        return r < 0 ? r : vl_view_string(&v, ret);
}

int vl_view_get_bool(const struct vl_view *object, unsigned field, bool *ret)
{
        struct vl_view v;
        int r = vl_view_field(object, field, &v);

        return r < 0 ? r : vl_view_bool(&v, ret);
}

int vl_view_get_u64(const struct vl_view *object, unsigned field, uint64_t *ret)
{
        struct vl_view v;
        int r = vl_view_field(object, field, &v);

        return r < 0 ? r : vl_view_u64(&v, ret);
}

static int get_typed(const struct vl_view *object, unsigned field, enum vl_token_type type,
                     struct vl_view *ret)
{
        struct vl_view v;
        int r = vl_view_field(object, field, &v);

        if (r < 0)
                return r;
        if (vl_view_type(&v) != type)
                return -EINVAL;
        *ret = v;
        return 0;
}

int vl_view_get_object(const struct vl_view *object, unsigned field, struct vl_view *ret)
{
        return get_typed(object, field, VL_TOKEN_OBJECT, ret);
}

int vl_view_get_array(const struct vl_view *object, unsigned field, struct vl_view *ret)
{
        return get_typed(object, field, VL_TOKEN_ARRAY, ret);
}
