/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/varlink/view-agreement.h"

#include <errno.h>
#include <string.h>

#include "varlink/message.h"

/* Nested objects are compared this deep: enough for every struct of the IDL. */
#define DEPTH_MAX 4

static const char *array_disagreement(const struct vl_view *a, json_object *t)
{
        struct vl_view e = vl_view_first(a);
        const char *s;

        if (vl_view_size(a) != json_object_array_length(t))
                return "array length";
        for (size_t k = 0; k < vl_view_size(a); k++, e = vl_view_following(&e)) {
                json_object *te = json_object_array_get_idx(t, k);
                bool string = json_object_is_type(te, json_type_string);

                /* A string element as the service reads it: no NUL in it. */
                if ((vl_view_string(&e, &s) == 0) !=
                    (string &&
                     strlen(json_object_get_string(te)) == (size_t)json_object_get_string_len(te)))
                        return "array element's type";
                if (string && vl_view_string(&e, &s) == 0 &&
                    strcmp(s, json_object_get_string(te)) != 0)
                        return "array element's string";
        }
        return NULL;
}

static const char *field_disagreement(const struct vl_view *v, json_object *t, const char *f,
                                      int depth);

static const char *object_disagreement(const struct vl_view *v, json_object *t,
                                       const char *const *extra, size_t n_extra, int depth)
{
        const char *d;

        json_object_object_foreach(t, key, value)
        {
                (void)value;
                if ((d = field_disagreement(v, t, key, depth)))
                        return d;
        }
        for (size_t i = 0; i < n_extra; i++)
                if ((d = field_disagreement(v, t, extra[i], depth)))
                        return d;
        return NULL;
}

/* A field as the service reads one, found by name: 0 and *ret, or -ENOENT when absent or null,
 * -EINVAL when of another type than `type` (when that is not -1). */
static int member(const struct vl_view *v, const char *f, int type, struct vl_view *ret)
{
        int r = vl_view_member(v, f, ret);

        if (r == 0 && type >= 0 && vl_view_type(ret) != (enum vl_token_type)type)
                return -EINVAL;
        return r;
}

static const char *field_disagreement(const struct vl_view *v, json_object *t, const char *f,
                                      int depth)
{
        const char *vs = NULL, *ts = NULL;
        uint64_t vu = 1, tu = 1;
        bool vb = false, tb = false;
        struct vl_view vo;
        json_object *to;
        int r;

        r = member(v, f, -1, &vo);
        if (r == 0)
                r = vl_view_string(&vo, &vs);
        if (r != vl_get_string(t, f, &ts) || (r == 0 && strcmp(vs, ts) != 0))
                return "string";
        r = member(v, f, -1, &vo);
        if (r == 0)
                r = vl_view_u64(&vo, &vu);
        if (r != vl_get_u64(t, f, &tu) || vu != tu)
                return "u64";
        r = member(v, f, -1, &vo);
        if (r == 0)
                r = vl_view_bool(&vo, &vb);
        if (r != vl_get_bool(t, f, &tb) || vb != tb)
                return "bool";
        r = member(v, f, VL_TOKEN_ARRAY, &vo);
        if (r != vl_get_array(t, f, &to))
                return "array";
        if (r == 0 && array_disagreement(&vo, to))
                return array_disagreement(&vo, to);
        r = member(v, f, VL_TOKEN_OBJECT, &vo);
        if (r != vl_get_object(t, f, &to))
                return "object";
        if (r == 0 && depth < DEPTH_MAX)
                return object_disagreement(&vo, to, NULL, 0, depth + 1);
        return NULL;
}

const char *view_disagreement(const struct vl_view *v, json_object *t, const char *const *extra,
                              size_t n_extra)
{
        return object_disagreement(v, t, extra, n_extra, 0);
}
