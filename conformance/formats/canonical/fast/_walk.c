/* The batch loop of the one-message rules (`Mirror._walk_py` in mirror.py), compiled.

   Why C: the loop reads a dozen fields of every message's Structs and compares them; on
   CPython 3.11 it is at the interpreter's floor (a column-at-once rewrite with
   attrgetter/map/compress was twice as slow, measured), and it was a third of the
   fast path's time per block (issue 38). No library does this: it is the rules' own
   condition. This file is a line-by-line transliteration of `_walk_py`, which stays
   the fallback (no compiler at install, `TURNSPEC_PURE_PYTHON=1`) and the oracle of
   the differential test (tests/test_fast_walk.py: same suspects, same tool blocks, same
   tool_use list on every corpus). Everything that is not a plain comparison (a block's
   own rules, a tool_result's inner blocks, the depth of arbitrary JSON, the provider of
   a model id not seen before, the stop reason) is a call back into the Python that
   `_walk_py` calls, so the two cannot drift on what a rule means.

   The other loops here follow the same rule: `opaque_ok` (`blocks.OpaqueCheck.ok_py`),
   `pair_tools` (`sessions.pair_tools_py`), `column` and `present` (`batch.column_py`,
   `batch.present_py`), `tool_ids` (`mirror.tool_ids_py`) and `priced` (`mirror._priced_py`: `Mirror._priced`'s arithmetic
   in 128-bit integers, asking `_priced` itself for anything it cannot settle exactly).

   Built by hatch_build.py when a C compiler is there; loaded by mirror.py only when the
   SOURCE hash below matches this file (a stale build beside edited source is ignored). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#ifndef WALK_SOURCE_HASH
#define WALK_SOURCE_HASH ""
#endif

static PyObject *s_metadata, *s_status, *s_user_id, *s_team_id, *s_role, *s_model, *s_provider, *s_routing,
    *s_chosen_model, *s_usage, *s_provider_raw, *s_content, *s_tool_use_id, *s_parent_tool_use_id, *s_input, *s_id,
    *s_complete, *s_assistant, *s_tool, *s_system, *s_cancelled, *s_at, *s_name;

/* Struct fields read at their slot: msgspec's fields are member descriptors on a type with
   the generic getattr, so the value sits at a fixed offset of the object. One cache entry
   per place a field is read (`F_*`), holding a reference to the type it was filled for (so
   that address cannot be another type's while cached); anything else (a property, another
   getattr, an unset slot) goes through PyObject_GetAttr. */
enum { F_STATUS, F_USER_ID, F_TEAM_ID, F_MODEL, F_PROVIDER, F_ROUTING, F_CHOSEN, F_USAGE, F_RAW, F_RESULT_ID,
       F_PARENT, F_RESULT_CONTENT, F_INPUT, F_USE_ID, F_ROLE, F_MSG_CONTENT, F_USE_NAME, F_USAGE_READ, F_COUNT = F_USAGE_READ + 6 };
typedef struct {
    PyTypeObject *type; /* a strong reference, or NULL */
    Py_ssize_t offset;  /* -1: not a plain object slot */
} Slot;
static Slot slots[F_COUNT];

/* the offset of field `name` in objects of type `t`, or -1 when it is not a plain object
   slot read by the generic getattr */
static Py_ssize_t member_offset(PyTypeObject *t, PyObject *name) {
    if (t->tp_getattro != PyObject_GenericGetAttr) return -1;
    PyObject *d = _PyType_Lookup(t, name); /* borrowed */
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) return -1;
    PyMemberDef *md = ((PyMemberDescrObject *)d)->d_member;
    return (md->type == T_OBJECT_EX || md->type == T_OBJECT) && md->offset > 0 ? md->offset : -1;
}

static PyObject *field(PyObject *obj, int f, PyObject *name) {
    Slot *sl = &slots[f];
    PyTypeObject *t = Py_TYPE(obj);
    if (sl->type != t) {
        Py_INCREF(t);
        Py_XSETREF(sl->type, t);
        sl->offset = member_offset(t, name);
    }
    if (sl->offset >= 0) {
        PyObject *v = *(PyObject **)((char *)obj + sl->offset);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
    }
    return PyObject_GetAttr(obj, name);
}
#define GET(obj, f, name) field((obj), F_##f, (name))

/* what `_walk_py` reads of the run, in this order (mirror.py: `_walk_context`) */
typedef struct {
    PyObject *unset, *tool_use, *tool_result, *special, *nested, *media, *allowed, *stop, *email, *block_ok,
        *tool_checks, *prefix, *known, *shallow, *inner_ok;
} Ctx;
#define CTX_LEN 15

/* -1 error, 0 false, 1 true: `x is not UNSET and x is not None` */
static inline int given(PyObject *x, const Ctx *c) { return x != c->unset && x != Py_None; }

/* `_shallow(value)`: flat dicts answer here, the rest in Python */
static int shallow(PyObject *value, const Ctx *c) {
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        int flat = 1;
        while (PyDict_Next(value, &pos, &k, &v)) {
            if (PyDict_CheckExact(v) || PyList_CheckExact(v)) {
                flat = 0;
                break;
            }
        }
        if (flat) return 1;
    }
    PyObject *r = PyObject_CallOneArg(c->shallow, value);
    if (r == NULL) return -1;
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

/* `known(model) or prefix(model)`, a new reference */
static PyObject *provider_of(PyObject *model, const Ctx *c) {
    PyObject *got = PyDict_GetItemWithError(c->known, model); /* borrowed */
    if (got == NULL && PyErr_Occurred()) return NULL;
    if (got != NULL) {
        int t = PyObject_IsTrue(got);
        if (t < 0) return NULL;
        if (t) {
            Py_INCREF(got);
            return got;
        }
    }
    return PyObject_CallOneArg(c->prefix, model);
}

/* `(known(model) or prefix(model)) != provider` */
static int provider_differs(PyObject *model, PyObject *provider, const Ctx *c) {
    PyObject *p = provider_of(model, c);
    if (p == NULL) return -1;
    int r = PyObject_RichCompareBool(p, provider, Py_NE);
    Py_DECREF(p);
    return r;
}

/* `inner and not nested.isdisjoint(map(type, inner)) and not inner_ok(inner)`: 1 when
   the tool_result's inner blocks stop the message */
static int inner_stops(PyObject *inner, const Ctx *c) {
    int t = PyObject_IsTrue(inner);
    if (t <= 0) return t;
    PyObject *it = PyObject_GetIter(inner);
    if (it == NULL) return -1;
    PyObject *x;
    int hit = 0;
    while ((x = PyIter_Next(it)) != NULL) {
        hit = PySet_Contains(c->nested, (PyObject *)Py_TYPE(x));
        Py_DECREF(x);
        if (hit != 0) break;
    }
    Py_DECREF(it);
    if (hit < 0 || PyErr_Occurred()) return -1;
    if (!hit) return 0;
    PyObject *r = PyObject_CallOneArg(c->inner_ok, inner);
    if (r == NULL) return -1;
    t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t < 0 ? -1 : !t;
}

/* a boolean of a call `fn(*args)` */
static int call_true(PyObject *fn, PyObject *const *args, size_t n) {
    PyObject *r = PyObject_Vectorcall(fn, args, n, NULL);
    if (r == NULL) return -1;
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

static int contains(PyObject *container, PyObject *x) { return PySequence_Contains(container, x); }

/* the metadata checks of `_walk_py` before the content: 1 suspect, 0 not, -1 error */
static int meta_suspect(PyObject *m, PyObject *meta, PyObject *role, const Ctx *c) {
    int r = -1;
    PyObject *status = NULL, *user = NULL, *team = NULL, *model = NULL, *provider = NULL, *routing = NULL,
             *chosen = NULL, *usage = NULL, *stop = NULL, *raw = NULL;
    (void)m;
    if ((status = GET(meta, STATUS, s_status)) == NULL) goto done;
    if (status != c->unset) {
        int ne = PyObject_RichCompareBool(status, s_complete, Py_NE);
        if (ne != 0) {
            r = ne;
            goto done;
        }
    }
    if (c->email != Py_None) {
        if ((user = GET(meta, USER_ID, s_user_id)) == NULL || (team = GET(meta, TEAM_ID, s_team_id)) == NULL)
            goto done;
        PyObject *both[2] = {user, team};
        for (int i = 0; i < 2; i++) {
            int t = PyObject_IsTrue(both[i]);
            if (t < 0) goto done;
            if (t) {
                int has = contains(both[i], s_at);
                if (has != 0) {
                    r = has;
                    goto done;
                }
            }
        }
    }
    if ((model = GET(meta, MODEL, s_model)) == NULL) goto done;
    int is_assistant = PyObject_RichCompareBool(role, s_assistant, Py_EQ);
    if (is_assistant < 0) goto done;
    if (is_assistant) {
        if ((provider = GET(meta, PROVIDER, s_provider)) == NULL || (routing = GET(meta, ROUTING, s_routing)) == NULL)
            goto done;
        if (!given(model, c) || !given(provider, c) || !given(routing, c)) {
            r = 1;
            goto done;
        }
        if ((chosen = GET(routing, CHOSEN, s_chosen_model)) == NULL) goto done;
        int ne = PyObject_RichCompareBool(chosen, model, Py_NE);
        if (ne != 0) {
            r = ne;
            goto done;
        }
        if ((usage = GET(meta, USAGE, s_usage)) == NULL) goto done;
        if (!given(usage, c)) {
            r = 1;
            goto done;
        }
        int differs = provider_differs(model, provider, c);
        if (differs != 0) {
            r = differs;
            goto done;
        }
    } else if (given(model, c)) {
        if ((provider = GET(meta, PROVIDER, s_provider)) == NULL) goto done;
        if (given(provider, c)) {
            int differs = provider_differs(model, provider, c);
            if (differs != 0) {
                r = differs;
                goto done;
            }
        }
    }
    if (c->stop != Py_None) {
        if ((stop = PyObject_CallOneArg(c->stop, meta)) == NULL) goto done;
        int eq = PyObject_RichCompareBool(stop, s_cancelled, Py_EQ);
        if (eq != 0) {
            r = eq;
            goto done;
        }
    }
    if ((raw = GET(meta, RAW, s_provider_raw)) == NULL) goto done;
    if (given(raw, c)) {
        int ok = shallow(raw, c);
        if (ok <= 0) {
            r = ok < 0 ? -1 : 1;
            goto done;
        }
    }
    r = 0;
done:
    Py_XDECREF(status);
    Py_XDECREF(user);
    Py_XDECREF(team);
    Py_XDECREF(model);
    Py_XDECREF(provider);
    Py_XDECREF(routing);
    Py_XDECREF(chosen);
    Py_XDECREF(usage);
    Py_XDECREF(stop);
    Py_XDECREF(raw);
    return r;
}

/* a `(i, use, tid)` entry appended to `*found` (created on first use) */
static int add_entry(PyObject **found, Py_ssize_t i, int use, PyObject *tid) {
    PyObject *idx = PyLong_FromSsize_t(i);
    if (idx == NULL) return -1;
    PyObject *entry = PyTuple_Pack(3, idx, use ? Py_True : Py_False, tid);
    Py_DECREF(idx);
    if (entry == NULL) return -1;
    if (*found == NULL && (*found = PyList_New(0)) == NULL) {
        Py_DECREF(entry);
        return -1;
    }
    int r = PyList_Append(*found, entry);
    Py_DECREF(entry);
    return r;
}

/* a tool message (TS103, TS110, TS111): 1 suspect, 0 cleared (its entry in `*found`), -1 error */
static int tool_message(PyObject *content, PyObject *meta, PyObject *role, const Ctx *c, PyObject **found) {
    Py_ssize_t n = PyObject_Length(content);
    if (n < 0) return -1;
    if (n != 1) return 1;
    int r = -1;
    PyObject *b = NULL, *tid = NULL, *parent = NULL, *ok_types = NULL, *inner = NULL;
    if ((b = PySequence_GetItem(content, 0)) == NULL) goto done;
    if ((PyObject *)Py_TYPE(b) != c->tool_result) {
        r = 1;
        goto done;
    }
    if ((tid = GET(b, RESULT_ID, s_tool_use_id)) == NULL) goto done;
    if (tid == Py_None) {
        r = 1;
        goto done;
    }
    if ((parent = GET(meta, PARENT, s_parent_tool_use_id)) == NULL) goto done;
    int ne = PyObject_RichCompareBool(tid, parent, Py_NE);
    if (ne != 0) {
        r = ne;
        goto done;
    }
    if (c->allowed != Py_None) {
        if ((ok_types = PyObject_GetItem(c->allowed, role)) == NULL) goto done;
        int has = contains(ok_types, c->tool_result);
        if (has <= 0) {
            r = has < 0 ? -1 : 1;
            goto done;
        }
    }
    if ((inner = GET(b, RESULT_CONTENT, s_content)) == NULL) goto done;
    int stops = inner_stops(inner, c);
    if (stops != 0) {
        r = stops;
        goto done;
    }
    r = add_entry(found, 0, 0, tid) < 0 ? -1 : 0;
done:
    Py_XDECREF(b);
    Py_XDECREF(tid);
    Py_XDECREF(parent);
    Py_XDECREF(ok_types);
    Py_XDECREF(inner);
    return r;
}

/* one special block of another message (`_walk_py`'s inner loop): 1 stops the message, 0 goes on, -1 error */
static int special_block(PyObject *b, PyObject *t, Py_ssize_t i, Py_ssize_t k, const Ctx *c, PyObject **found,
                         PyObject *uses, PyObject *owners) {
    int r = -1;
    PyObject *x = NULL, *tid = NULL;
    if (t == c->tool_use) {
        if ((x = GET(b, INPUT, s_input)) == NULL) goto done;
        int ok = shallow(x, c);
        if (ok <= 0) {
            r = ok < 0 ? -1 : 1;
            goto done;
        }
        if (c->tool_checks != Py_None) { /* `_block_ok(b, False)`, its verdict per name kept */
            PyObject *name = GET(b, USE_NAME, s_name);
            if (name == NULL) goto done;
            PyObject *check = PyDict_GetItemWithError(c->tool_checks, name); /* borrowed */
            Py_DECREF(name);
            if (check == NULL && PyErr_Occurred()) goto done;
            if (check == NULL) {
                PyObject *args[2] = {b, Py_False};
                ok = call_true(c->block_ok, args, 2);
            } else if (check == Py_True || check == Py_False) {
                ok = check == Py_True;
            } else {
                Py_INCREF(check);
                ok = call_true(check, &x, 1);
                Py_DECREF(check);
            }
            if (ok <= 0) {
                r = ok < 0 ? -1 : 1;
                goto done;
            }
        }
        if (PyList_Append(uses, b) < 0) goto done;
        PyObject *owner = PyLong_FromSsize_t(k);
        if (owner == NULL) goto done;
        int app = PyList_Append(owners, owner);
        Py_DECREF(owner);
        if (app < 0) goto done;
        if ((tid = GET(b, USE_ID, s_id)) == NULL) goto done;
        r = add_entry(found, i, 1, tid) < 0 ? -1 : 0;
    } else if (t == c->tool_result) {
        if ((x = GET(b, RESULT_CONTENT, s_content)) == NULL) goto done;
        int stops = inner_stops(x, c);
        if (stops != 0) {
            r = stops;
            goto done;
        }
        if ((tid = GET(b, RESULT_ID, s_tool_use_id)) == NULL) goto done;
        r = add_entry(found, i, 0, tid) < 0 ? -1 : 0;
    } else {
        int is_media = PySet_Contains(c->media, t);
        if (is_media < 0) goto done;
        if (is_media) {
            PyObject *args[1] = {b};
            int ok = call_true(c->block_ok, args, 1);
            if (ok <= 0) {
                r = ok < 0 ? -1 : 1;
                goto done;
            }
        }
        r = 0;
    }
done:
    Py_XDECREF(x);
    Py_XDECREF(tid);
    return r;
}

/* the content of a message that is not a tool message: 1 suspect, 0 cleared, -1 error */
static int content_suspect(PyObject *content, PyObject *role, Py_ssize_t k, const Ctx *c, PyObject **found,
                           PyObject *uses, PyObject *owners) {
    Py_ssize_t n = PyObject_Length(content);
    if (n < 0) return -1;
    if (n == 0) {
        int sys = PyObject_RichCompareBool(role, s_system, Py_EQ);
        return sys < 0 ? -1 : !sys; /* TS101 */
    }
    int r = -1;
    PyObject *ok_types = NULL, *b = NULL;
    if (c->allowed != Py_None && (ok_types = PyObject_GetItem(c->allowed, role)) == NULL) return -1;
    if (n == 1) { /* one plain block (the common case): no loop */
        if ((b = PySequence_GetItem(content, 0)) == NULL) goto done;
        PyObject *t = (PyObject *)Py_TYPE(b);
        int sp = PySet_Contains(c->special, t);
        if (sp < 0) goto done;
        if (!sp) {
            if (ok_types != NULL) {
                int has = contains(ok_types, t);
                if (has < 0) goto done;
                r = !has; /* TS102 */
            } else {
                r = 0;
            }
            goto done;
        }
        Py_CLEAR(b);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((b = PySequence_GetItem(content, i)) == NULL) goto done;
        PyObject *t = (PyObject *)Py_TYPE(b);
        if (ok_types != NULL) {
            int has = contains(ok_types, t);
            if (has <= 0) {
                r = has < 0 ? -1 : 1; /* TS102 */
                goto done;
            }
        }
        int sp = PySet_Contains(c->special, t);
        if (sp < 0) goto done;
        if (sp) {
            int stops = special_block(b, t, i, k, c, found, uses, owners);
            if (stops != 0) {
                r = stops;
                goto done;
            }
        }
        Py_CLEAR(b);
    }
    r = 0;
done:
    Py_XDECREF(ok_types);
    Py_XDECREF(b);
    return r;
}

/* one message: 1 suspect, 0 cleared, -1 error; its tool entries land in `tools[k]` */
static int one(PyObject *m, PyObject *meta, PyObject *at, Py_ssize_t k, const Ctx *c, PyObject *tools, PyObject *uses,
               PyObject *owners) {
    if (at == Py_None) return 1; /* TS115 */
    int r = -1;
    PyObject *role = NULL, *content = NULL, *found = NULL;
    if ((role = GET(m, ROLE, s_role)) == NULL) goto done;
    r = meta_suspect(m, meta, role, c);
    if (r != 0) goto done;
    r = -1;
    if ((content = GET(m, MSG_CONTENT, s_content)) == NULL) goto done;
    int is_tool = PyObject_RichCompareBool(role, s_tool, Py_EQ);
    if (is_tool < 0) goto done;
    r = is_tool ? tool_message(content, meta, role, c, &found) : content_suspect(content, role, k, c, &found, uses, owners);
    if (r == 0 && found != NULL) {
        PyObject *key = PyLong_FromSsize_t(k);
        if (key == NULL || PyDict_SetItem(tools, key, found) < 0) r = -1;
        Py_XDECREF(key);
    }
done:
    Py_XDECREF(role);
    Py_XDECREF(content);
    Py_XDECREF(found);
    return r;
}

PyDoc_STRVAR(walk_doc,
             "walk(msgs, metas, ats, suspects, ctx) -> (tools, uses, use_owner): `Mirror._walk_py`, compiled.");

static PyObject *walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "walk takes 5 arguments");
        return NULL;
    }
    PyObject *msgs = args[0], *metas = args[1], *ats = args[2], *suspects = args[3], *ctx = args[4];
    if (!PyList_CheckExact(msgs) || !PyList_CheckExact(metas) || !PyList_CheckExact(ats) || !PySet_Check(suspects) ||
        !PyTuple_CheckExact(ctx) || PyTuple_GET_SIZE(ctx) != CTX_LEN) {
        PyErr_SetString(PyExc_TypeError, "walk(list, list, list, set, tuple of 15)");
        return NULL;
    }
    Ctx c;
    PyObject **slot = (PyObject **)&c;
    for (Py_ssize_t i = 0; i < CTX_LEN; i++) slot[i] = PyTuple_GET_ITEM(ctx, i);
    if (!PyAnySet_Check(c.special) || !PyAnySet_Check(c.nested) || !PyAnySet_Check(c.media) || !PyDict_Check(c.known) ||
        (c.tool_checks != Py_None && !PyDict_Check(c.tool_checks))) {
        PyErr_SetString(PyExc_TypeError, "walk: special, nested and media are sets, known a dict, tool_checks one or None");
        return NULL;
    }
    PyObject *tools = PyDict_New(), *uses = PyList_New(0), *owners = PyList_New(0);
    if (tools == NULL || uses == NULL || owners == NULL) goto error;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(msgs); k++) {
        if (k >= PyList_GET_SIZE(metas) || k >= PyList_GET_SIZE(ats)) {
            PyErr_SetString(PyExc_IndexError, "walk: metas and ats are shorter than msgs");
            goto error;
        }
        /* the items are held while a call back into Python runs */
        PyObject *m = PyList_GET_ITEM(msgs, k), *meta = PyList_GET_ITEM(metas, k), *at = PyList_GET_ITEM(ats, k);
        Py_INCREF(m);
        Py_INCREF(meta);
        Py_INCREF(at);
        int r = one(m, meta, at, k, &c, tools, uses, owners);
        Py_DECREF(m);
        Py_DECREF(meta);
        Py_DECREF(at);
        if (r < 0) goto error;
        if (r) {
            PyObject *key = PyLong_FromSsize_t(k);
            if (key == NULL) goto error;
            int a = PySet_Add(suspects, key);
            Py_DECREF(key);
            if (a < 0) goto error;
        }
    }
    PyObject *out = PyTuple_Pack(3, tools, uses, owners);
    Py_DECREF(tools);
    Py_DECREF(uses);
    Py_DECREF(owners);
    return out;
error:
    Py_XDECREF(tools);
    Py_XDECREF(uses);
    Py_XDECREF(owners);
    return NULL;
}

/* ---- `OpaqueCheck.ok` (blocks.py), compiled ---- */

/* strict UTF-8 (what `bytes.decode()` accepts: no overlong form, no surrogate, nothing past U+10FFFF) */
static int utf8_ok(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        while (i + 8 <= n) { /* eight ASCII bytes at a time */
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL) break;
            i += 8;
        }
        while (i < n && s[i] < 0x80) i++; /* up to the next multibyte sequence */
        if (i >= n) break;
        unsigned char c = s[i];
        if (c < 0xC2) {
            return 0;
        } else if (c < 0xE0) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c < 0xF0) {
            if (i + 2 >= n) return 0;
            unsigned char c1 = s[i + 1], c2 = s[i + 2];
            if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80) return 0;
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return 0;
            i += 3;
        } else if (c < 0xF5) {
            if (i + 3 >= n) return 0;
            unsigned char c1 = s[i + 1], c2 = s[i + 2], c3 = s[i + 3];
            if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80) return 0;
            if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* what `opaque_ok` knows of a block class, read once per call: its raw field (`fields`)
   and that field's slot, whether it holds blocks (`containers`) and its `content` slot */
typedef struct {
    PyTypeObject *type; /* borrowed: every object of this type is held by the batch */
    PyObject *name;     /* borrowed from `fields`, or NULL: no raw field */
    Py_ssize_t raw_at, content_at;
    int holds;
} BlockKind;
#define N_KINDS 16

typedef struct {
    PyObject *fields, *containers;
    int nested, used;
    BlockKind kinds[N_KINDS];
} Opaque;

/* `block`'s kind, learned once per call (in `spare` when the cache is full: the same
   questions, asked each time), or NULL with an error set */
static const BlockKind *kind_of(PyObject *block, Opaque *o, BlockKind *spare) {
    PyTypeObject *t = Py_TYPE(block);
    for (int i = 0; i < o->used; i++)
        if (o->kinds[i].type == t) return &o->kinds[i];
    BlockKind *k = o->used < N_KINDS ? &o->kinds[o->used] : spare;
    k->type = t;
    k->name = PyDict_GetItemWithError(o->fields, (PyObject *)t); /* borrowed */
    if (k->name == NULL && PyErr_Occurred()) return NULL;
    k->raw_at = k->name == NULL ? -1 : member_offset(t, k->name);
    k->holds = o->nested ? PySet_Contains(o->containers, (PyObject *)t) : 0;
    if (k->holds < 0) return NULL;
    k->content_at = k->holds ? member_offset(t, s_content) : -1;
    if (k != spare) o->used++;
    return k;
}

/* a field of `obj` at its slot, else by getattr: a new reference */
static PyObject *at_slot(PyObject *obj, Py_ssize_t offset, PyObject *name) {
    if (offset >= 0) {
        PyObject *v = *(PyObject **)((char *)obj + offset);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
    }
    return PyObject_GetAttr(obj, name);
}

/* the raw value `raw` proven: 1 a string in UTF-8 (or empty: `filter(None, ...)`), 0 not, -1 error */
static int raw_ok(PyObject *raw) {
    int t = PyObject_IsTrue(raw);
    if (t <= 0) return t < 0 ? -1 : 1;
    Py_buffer view;
    if (PyObject_GetBuffer(raw, &view, PyBUF_SIMPLE) < 0) return -1;
    const unsigned char *bytes = (const unsigned char *)view.buf;
    int ok = view.len > 0 && bytes[0] == '"' && utf8_ok(bytes, view.len);
    PyBuffer_Release(&view);
    return ok;
}

static int block_ok_slow(PyObject *b, int nested, Opaque *o);
static int block_ok_kind(PyObject *b, const BlockKind *k, int nested, Opaque *o);

/* every block of `content` proven: its raw field (`fields`: block class -> the name of its
   raw field, the `opaque` the Python reads), and when `nested`, the blocks of the `content`
   of each block whose class is one of `containers` */
static int blocks_ok(PyObject *content, int nested, Opaque *o) {
    if (!PyList_CheckExact(content)) {
        PyObject *it = PyObject_GetIter(content), *b;
        if (it == NULL) return -1;
        int ok = 1;
        while (ok == 1 && (b = PyIter_Next(it)) != NULL) {
            ok = block_ok_slow(b, nested, o);
            Py_DECREF(b);
        }
        Py_DECREF(it);
        return ok == 1 && PyErr_Occurred() ? -1 : ok;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
        PyObject *b = PyList_GET_ITEM(content, i);
        Py_INCREF(b);
        int ok = block_ok_slow(b, nested, o);
        Py_DECREF(b);
        if (ok != 1) return ok;
    }
    return 1;
}

/* one block of kind `k` proven: its raw field, then its inner blocks when `nested` */
static int block_ok_kind(PyObject *b, const BlockKind *k, int nested, Opaque *o) {
    if (k->name != NULL) {
        PyObject *raw = at_slot(b, k->raw_at, k->name);
        if (raw == NULL) return -1;
        int ok = raw_ok(raw);
        Py_DECREF(raw);
        if (ok != 1) return ok;
    }
    if (!nested || !k->holds) return 1;
    PyObject *inner = at_slot(b, k->content_at, s_content);
    if (inner == NULL) return -1;
    int ok = blocks_ok(inner, 0, o);
    Py_DECREF(inner);
    return ok;
}

/* one block proven (its raw field, its inner blocks when `nested`): 1, 0, -1 error */
static int block_ok_slow(PyObject *b, int nested, Opaque *o) {
    BlockKind spare;
    const BlockKind *k = kind_of(b, o, &spare);
    return k == NULL ? -1 : block_ok_kind(b, k, nested, o);
}
PyDoc_STRVAR(opaque_ok_doc, "opaque_ok(msgs, nested, fields, containers) -> bool: `OpaqueCheck.ok`, compiled.");

static PyObject *opaque_ok(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4 || !PyList_CheckExact(args[0]) || !PyDict_Check(args[2]) || !PyAnySet_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "opaque_ok(list, nested, dict, set)");
        return NULL;
    }
    Opaque o = {args[2], args[3], PyObject_IsTrue(args[1]), 0, {{0}}};
    if (o.nested < 0) return NULL;
    PyObject *msgs = args[0];
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(msgs); k++) {
        PyObject *m = PyList_GET_ITEM(msgs, k);
        Py_INCREF(m);
        PyObject *content = field(m, F_MSG_CONTENT, s_content);
        Py_DECREF(m);
        if (content == NULL) return NULL;
        int ok = blocks_ok(content, o.nested, &o);
        Py_DECREF(content);
        if (ok < 0) return NULL;
        if (!ok) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

/* ---- the tool blocks of a batch (`{message index: [(block index, use, id), ...]}`) ---- */

/* `blocks`, one message's tool blocks, is a list: 1, else 0 with a TypeError naming `who` */
static int tool_blocks_ok(PyObject *blocks, const char *who) {
    if (PyList_CheckExact(blocks)) return 1;
    PyErr_Format(PyExc_TypeError, "%s: a message's tool blocks are a list", who);
    return 0;
}

/* block `n` of `blocks`, checked as (index, use, id): borrowed, or NULL with a TypeError */
static PyObject *tool_entry(PyObject *blocks, Py_ssize_t n, const char *who) {
    PyObject *entry = PyList_GET_ITEM(blocks, n);
    if (PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 3) return entry;
    PyErr_Format(PyExc_TypeError, "%s: a tool block is (index, use, id)", who);
    return NULL;
}

/* ---- `sessions.pair_tools`, compiled ---- */

PyDoc_STRVAR(pair_tools_doc,
             "pair_tools(tools, sids) -> (uses, use_at, outside, inside, still_open) or None: `sessions.pair_tools`, compiled.");

static PyObject *pair_tools(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyDict_CheckExact(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "pair_tools(dict, list)");
        return NULL;
    }
    PyObject *tools = args[0], *sids = args[1];
    PyObject *uses = PyList_New(0), *use_at = PyList_New(0), *outside = PyList_New(0), *inside = PyDict_New(),
             *open_at = PyDict_New(), *called = PySet_New(NULL), *answered = PySet_New(NULL), *out = NULL;
    if (!uses || !use_at || !outside || !inside || !open_at || !called || !answered) goto done;
    Py_ssize_t pos = 0;
    PyObject *j, *blocks;
    int irregular = 0;
    while (!irregular && PyDict_Next(tools, &pos, &j, &blocks)) {
        if (!tool_blocks_ok(blocks, "pair_tools")) goto done;
        for (Py_ssize_t n = 0; n < PyList_GET_SIZE(blocks); n++) {
            PyObject *entry = tool_entry(blocks, n, "pair_tools");
            if (entry == NULL) goto done;
            PyObject *i = PyTuple_GET_ITEM(entry, 0), *tid = PyTuple_GET_ITEM(entry, 2);
            int use = PyObject_IsTrue(PyTuple_GET_ITEM(entry, 1));
            if (use < 0) goto done;
            if (use) {
                int seen = PySet_Contains(called, tid);
                if (seen < 0) goto done;
                if (seen) {
                    irregular = 1;
                    break;
                }
                PyObject *at = PyTuple_Pack(2, j, i);
                if (at == NULL || PySet_Add(called, tid) < 0 || PyDict_SetItem(open_at, tid, at) < 0 ||
                    PyList_Append(uses, tid) < 0 || PyList_Append(use_at, j) < 0) {
                    Py_XDECREF(at);
                    goto done;
                }
                Py_DECREF(at);
                continue;
            }
            int seen = PySet_Contains(answered, tid);
            if (seen < 0) goto done;
            if (seen) { /* a second result */
                irregular = 1;
                break;
            }
            if (PySet_Add(answered, tid) < 0) goto done;
            PyObject *at = PyDict_GetItemWithError(open_at, tid); /* borrowed */
            if (at == NULL && PyErr_Occurred()) goto done;
            if (at == NULL) {
                PyObject *pair = PyTuple_Pack(2, j, tid);
                if (pair == NULL || PyList_Append(outside, pair) < 0) {
                    Py_XDECREF(pair);
                    goto done;
                }
                Py_DECREF(pair);
                continue;
            }
            Py_INCREF(at);
            PyObject *sid_j = PyObject_GetItem(sids, j), *sid_call = PyObject_GetItem(sids, PyTuple_GET_ITEM(at, 0));
            int popped = PyDict_DelItem(open_at, tid);
            Py_DECREF(at);
            int differs = (sid_j && sid_call && popped == 0) ? PyObject_RichCompareBool(sid_call, sid_j, Py_NE) : -1;
            if (differs != 0) {
                Py_XDECREF(sid_j);
                Py_XDECREF(sid_call);
                if (differs < 0) goto done;
                irregular = 1; /* a call of another session: not open in this one */
                break;
            }
            Py_DECREF(sid_call);
            PyObject *got = PyDict_GetItemWithError(inside, sid_j); /* borrowed */
            int fail = 0;
            if (got == NULL && PyErr_Occurred()) {
                fail = 1;
            } else if (got == NULL) {
                PyObject *ids = PyList_New(1);
                if (ids == NULL) {
                    fail = 1;
                } else {
                    Py_INCREF(tid);
                    PyList_SET_ITEM(ids, 0, tid);
                    fail = PyDict_SetItem(inside, sid_j, ids) < 0;
                    Py_DECREF(ids);
                }
            } else {
                fail = PyList_Append(got, tid) < 0;
            }
            Py_DECREF(sid_j);
            if (fail) goto done;
        }
    }
    if (irregular) {
        Py_INCREF(Py_None);
        out = Py_None;
        goto done;
    }
    PyObject *still_open = PyList_New(0);
    if (still_open == NULL) goto done;
    pos = 0;
    PyObject *tid, *at;
    while (PyDict_Next(open_at, &pos, &tid, &at)) {
        PyObject *row = PyTuple_Pack(3, PyTuple_GET_ITEM(at, 0), PyTuple_GET_ITEM(at, 1), tid);
        if (row == NULL || PyList_Append(still_open, row) < 0) {
            Py_XDECREF(row);
            Py_DECREF(still_open);
            goto done;
        }
        Py_DECREF(row);
    }
    out = PyTuple_Pack(5, uses, use_at, outside, inside, still_open);
    Py_DECREF(still_open);
done:
    Py_XDECREF(uses);
    Py_XDECREF(use_at);
    Py_XDECREF(outside);
    Py_XDECREF(inside);
    Py_XDECREF(open_at);
    Py_XDECREF(called);
    Py_XDECREF(answered);
    return out;
}

/* ---- `batch.Columns`' two loops, compiled: a field of every object, the present ones ---- */

PyDoc_STRVAR(column_doc, "column(objs, name) -> list: `[getattr(x, name) for x in objs]` (`batch.column_py`), compiled.");

static PyObject *column(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_CheckExact(args[0]) || !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "column(list, str)");
        return NULL;
    }
    PyObject *objs = PyList_GetSlice(args[0], 0, PyList_GET_SIZE(args[0])), *name = args[1];
    if (objs == NULL) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(objs);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        Py_DECREF(objs);
        return NULL;
    }
    PyTypeObject *type = NULL; /* the type `offset` is of (every object is held by `objs`) */
    Py_ssize_t offset = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(objs, i), *v = NULL;
        PyTypeObject *t = Py_TYPE(x);
        if (t != type) {
            type = t;
            offset = member_offset(t, name);
        }
        if (offset >= 0 && (v = *(PyObject **)((char *)x + offset)) != NULL) {
            Py_INCREF(v);
        } else if ((v = PyObject_GetAttr(x, name)) == NULL) {
            Py_DECREF(out);
            Py_DECREF(objs);
            return NULL;
        }
        PyList_SET_ITEM(out, i, v);
    }
    Py_DECREF(objs);
    return out;
}

PyDoc_STRVAR(present_doc, "present(values, unset) -> (indices, values) or None: `batch.present_py`, compiled.");

static PyObject *present(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "present(list, unset)");
        return NULL;
    }
    PyObject *values = args[0], *unset = args[1];
    Py_ssize_t n = PyList_GET_SIZE(values), missing = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(values, i);
        missing += v == Py_None || v == unset;
    }
    if (!missing) Py_RETURN_NONE;
    PyObject *keep = PyList_New(n - missing), *kept = PyList_New(n - missing);
    if (keep == NULL || kept == NULL) {
        Py_XDECREF(keep);
        Py_XDECREF(kept);
        return NULL;
    }
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; i < n && j < n - missing; i++) {
        PyObject *v = PyList_GET_ITEM(values, i);
        if (v == Py_None || v == unset) continue;
        PyObject *k = PyLong_FromSsize_t(i);
        if (k == NULL) {
            Py_DECREF(keep);
            Py_DECREF(kept);
            return NULL;
        }
        PyList_SET_ITEM(keep, j, k);
        Py_INCREF(v);
        PyList_SET_ITEM(kept, j, v);
        j++;
    }
    PyObject *out = PyTuple_Pack(2, keep, kept);
    Py_DECREF(keep);
    Py_DECREF(kept);
    return out;
}

/* ---- `mirror.tool_ids_py`, compiled ---- */

PyDoc_STRVAR(tool_ids_doc, "tool_ids(tools) -> (ids, owners): `mirror.tool_ids_py`, compiled.");

static PyObject *tool_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 1 || !PyDict_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "tool_ids(dict)");
        return NULL;
    }
    PyObject *ids = PyList_New(0), *owners = PyList_New(0), *k, *found, *out = NULL;
    Py_ssize_t pos = 0;
    if (ids == NULL || owners == NULL) goto done;
    while (PyDict_Next(args[0], &pos, &k, &found)) {
        if (!tool_blocks_ok(found, "tool_ids")) goto done;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(found); i++) {
            PyObject *entry = tool_entry(found, i, "tool_ids");
            if (entry == NULL) goto done;
            if (PyList_Append(ids, PyTuple_GET_ITEM(entry, 2)) < 0 || PyList_Append(owners, k) < 0) goto done;
        }
    }
    out = PyTuple_Pack(2, ids, owners);
done:
    Py_XDECREF(ids);
    Py_XDECREF(owners);
    return out;
}

/* ---- `mirror._priced_py`, its common case compiled ---- */

/* `Mirror._priced` in integers of 128 bits: a usage's verdict where every number fits and
   its plan was made before (`Mirror._price_plans`), else -2: ask `_priced` itself. Where
   the compiler has no 128-bit integers, every message asks. */
#define ASK (-2)
#define USAGE_READS 6 /* mirror.USAGE_READS: version, the counts of `pricing.TERMS`, cost */
#define N_TERMS 4

#if defined(__SIZEOF_INT128__)
typedef __int128 wide;

/* a Python int as a `wide`: 1, or 0 when it is not an exact int that fits in 64 bits */
static int wide_of(PyObject *x, wide *out) {
    if (!PyLong_CheckExact(x)) return 0;
    int over = 0;
    long long v = PyLong_AsLongLongAndOverflow(x, &over);
    if (over || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = (wide)v;
    return 1;
}

/* a plan's rates (`ScaledRates.terms`, `ScaledRates.scale`) as `wide`s, read once per
   ScaledRates a call meets (a run meets a handful of models) */
typedef struct {
    PyObject *scaled; /* a strong reference, or NULL */
    int usable;       /* every rate and the scale fit */
    int has[N_TERMS];
    wide rate[N_TERMS], scale;
} Rates;
#define N_RATES 8

static const Rates *rates_of(PyObject *scaled, Rates *cache, int *used) {
    for (int i = 0; i < *used; i++)
        if (cache[i].scaled == scaled) return &cache[i];
    if (*used == N_RATES) return NULL;
    Rates *r = &cache[*used];
    memset(r, 0, sizeof *r);
    PyObject *terms = PyObject_GetAttrString(scaled, "terms"), *scale = PyObject_GetAttrString(scaled, "scale");
    if (terms == NULL || scale == NULL) {
        Py_XDECREF(terms);
        Py_XDECREF(scale);
        return NULL;
    }
    r->usable = PyTuple_CheckExact(terms) && PyTuple_GET_SIZE(terms) == N_TERMS && wide_of(scale, &r->scale);
    for (int i = 0; r->usable && i < N_TERMS; i++) {
        PyObject *t = PyTuple_GET_ITEM(terms, i);
        r->has[i] = t != Py_None;
        if (r->has[i] && !wide_of(t, &r->rate[i])) r->usable = 0;
    }
    Py_DECREF(terms);
    Py_DECREF(scale);
    Py_INCREF(scaled);
    r->scaled = scaled;
    (*used)++;
    return r;
}

/* `int(digits) * scale == total * 10 ** len(frac)` of `_priced`, for an ASCII cost: 1, 0,
   or ASK when a number does not fit */
static int cost_equal(PyObject *cost, const wide *counts, const Rates *r) {
    if (!PyUnicode_CheckExact(cost) || !PyUnicode_IS_ASCII(cost)) return ASK;
    const char *s = (const char *)PyUnicode_DATA(cost);
    Py_ssize_t n = PyUnicode_GET_LENGTH(cost), digits = 0, frac = -1;
    wide value = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '.' && frac < 0) {
            frac = 0; /* `partition`: the first dot */
            continue;
        }
        if (ch < '0' || ch > '9') return 0; /* not a plain decimal: `_priced` says False */
        if (++digits > 36) return ASK;
        value = value * 10 + (ch - '0');
        if (frac >= 0) frac++;
    }
    if (digits == 0) return 0;
    wide total = 0, term, lhs, rhs, pow10 = 1;
    for (int i = 0; i < N_TERMS; i++) {
        if (i >= 2 && counts[i] == 0) continue; /* a bucket with no tokens costs nothing */
        if (!r->has[i]) return ASK; /* `total_of` raises or takes 0: `_priced` says which */
        if (__builtin_mul_overflow(r->rate[i], counts[i], &term) || __builtin_add_overflow(total, term, &total))
            return ASK;
    }
    for (Py_ssize_t i = 0; i < (frac < 0 ? 0 : frac); i++) pow10 *= 10;
    if (__builtin_mul_overflow(value, r->scale, &lhs) || __builtin_mul_overflow(total, pow10, &rhs)) return ASK;
    return lhs == rhs;
}

/* `_priced(meta, model)` past its plan lookup: 1, 0, -1 error, or ASK */
static int priced_one(PyObject *usage, PyObject *plan, int on_bucket, PyObject *const *reads, PyObject *unset,
                      Rates *cache, int *used) {
    if (plan == Py_True || plan == Py_False) return plan == Py_True;
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 3) return ASK;
    PyObject *got[USAGE_READS - 1] = {NULL};
    wide counts[N_TERMS];
    int r = ASK;
    for (int i = 1; i < USAGE_READS; i++) {
        if ((got[i - 1] = field(usage, F_USAGE_READ + i, reads[i])) == NULL) {
            r = -1;
            goto done;
        }
    }
    for (int i = 0; i < N_TERMS; i++) {
        PyObject *c = got[i];
        if (i >= 2 && c == unset) {
            counts[i] = 0;
        } else if (!wide_of(c, &counts[i])) {
            goto done;
        }
    }
    PyObject *no_cached = PyTuple_GET_ITEM(plan, 0), *no_created = PyTuple_GET_ITEM(plan, 1);
    PyObject *scaled = PyTuple_GET_ITEM(plan, 2);
    if (!PyBool_Check(no_cached) || !PyBool_Check(no_created)) goto done;
    if ((counts[2] && no_cached == Py_True) || (counts[3] && no_created == Py_True)) {
        r = !on_bucket; /* TS403 */
        goto done;
    }
    if (scaled == Py_None) { /* TS404 is off */
        r = 1;
        goto done;
    }
    const Rates *rates = rates_of(scaled, cache, used);
    if (rates == NULL) {
        if (PyErr_Occurred()) r = -1;
        goto done;
    }
    if (rates->usable) r = cost_equal(got[USAGE_READS - 2], counts, rates);
done:
    for (int i = 0; i < USAGE_READS - 1; i++) Py_XDECREF(got[i]);
    return r;
}
#endif

PyDoc_STRVAR(priced_doc, "priced(metas, suspects, plans, priced, unset, on_bucket, reads) -> None: "
                         "`mirror._priced_py`, compiled.");

static PyObject *priced(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7 || !PyList_CheckExact(args[0]) || !PySet_CheckExact(args[1]) || !PyDict_CheckExact(args[2]) ||
        !PyTuple_CheckExact(args[6]) || PyTuple_GET_SIZE(args[6]) != USAGE_READS) {
        PyErr_SetString(PyExc_TypeError, "priced(list, set, dict, priced, unset, on_bucket, reads of 6)");
        return NULL;
    }
    PyObject *metas = args[0], *suspects = args[1], *plans = args[2], *fn = args[3], *unset = args[4];
    PyObject *const *reads = &PyTuple_GET_ITEM(args[6], 0);
    int on_bucket = PyObject_IsTrue(args[5]);
    if (on_bucket < 0) return NULL;
    int failed = 0;
#if defined(__SIZEOF_INT128__)
    Rates cache[N_RATES];
    int used = 0;
#endif
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(metas) && !failed; k++) {
        PyObject *meta = PyList_GET_ITEM(metas, k), *usage = NULL, *model = NULL, *version = NULL, *key = NULL;
        PyObject *index = PyLong_FromSsize_t(k);
        Py_INCREF(meta);
        int verdict = -1;
        if (index == NULL || (usage = GET(meta, USAGE, s_usage)) == NULL) goto next;
        if (usage == unset || usage == Py_None) {
            verdict = 1;
            goto next;
        }
        int seen = PySet_Contains(suspects, index);
        if (seen != 0) {
            verdict = seen < 0 ? -1 : 1;
            goto next;
        }
        if ((model = GET(meta, MODEL, s_model)) == NULL) goto next;
        if (model == unset) {
            Py_DECREF(model);
            model = Py_None;
            Py_INCREF(model);
        }
        verdict = ASK;
#if defined(__SIZEOF_INT128__)
        if ((version = field(usage, F_USAGE_READ, reads[0])) == NULL || (key = PyTuple_Pack(2, version, model)) == NULL) {
            verdict = -1;
            goto next;
        }
        PyObject *plan = PyDict_GetItemWithError(plans, key); /* borrowed */
        if (plan == NULL && PyErr_Occurred()) {
            verdict = -1;
        } else if (plan != NULL) {
            Py_INCREF(plan);
            verdict = priced_one(usage, plan, on_bucket, reads, unset, cache, &used);
            Py_DECREF(plan);
        }
#endif
        if (verdict == ASK) {
            PyObject *call[2] = {meta, model};
            verdict = call_true(fn, call, 2);
        }
    next:
        if (verdict < 0 || (verdict == 0 && PySet_Add(suspects, index) < 0)) failed = 1;
        Py_XDECREF(index);
        Py_XDECREF(usage);
        Py_XDECREF(model);
        Py_XDECREF(version);
        Py_XDECREF(key);
        Py_DECREF(meta);
    }
#if defined(__SIZEOF_INT128__)
    for (int i = 0; i < used; i++) Py_DECREF(cache[i].scaled);
#endif
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL, walk_doc},
    {"opaque_ok", (PyCFunction)(void (*)(void))opaque_ok, METH_FASTCALL, opaque_ok_doc},
    {"pair_tools", (PyCFunction)(void (*)(void))pair_tools, METH_FASTCALL, pair_tools_doc},
    {"column", (PyCFunction)(void (*)(void))column, METH_FASTCALL, column_doc},
    {"present", (PyCFunction)(void (*)(void))present, METH_FASTCALL, present_doc},
    {"priced", (PyCFunction)(void (*)(void))priced, METH_FASTCALL, priced_doc},
    {"tool_ids", (PyCFunction)(void (*)(void))tool_ids, METH_FASTCALL, tool_ids_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", "`Mirror._walk_py`, compiled (see _walk.c).", -1,
                                    methods, NULL, NULL, NULL, NULL};

#define INTERN(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC PyInit__walk(void) {
    INTERN(s_metadata, "metadata");
    INTERN(s_status, "status");
    INTERN(s_user_id, "user_id");
    INTERN(s_team_id, "team_id");
    INTERN(s_role, "role");
    INTERN(s_model, "model");
    INTERN(s_provider, "provider");
    INTERN(s_routing, "routing");
    INTERN(s_chosen_model, "chosen_model");
    INTERN(s_usage, "usage");
    INTERN(s_provider_raw, "provider_raw");
    INTERN(s_content, "content");
    INTERN(s_tool_use_id, "tool_use_id");
    INTERN(s_parent_tool_use_id, "parent_tool_use_id");
    INTERN(s_input, "input");
    INTERN(s_id, "id");
    INTERN(s_complete, "complete");
    INTERN(s_assistant, "assistant");
    INTERN(s_tool, "tool");
    INTERN(s_system, "system");
    INTERN(s_cancelled, "cancelled");
    INTERN(s_at, "@");
    INTERN(s_name, "name");
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL) return NULL;
    if (PyModule_AddStringConstant(mod, "SOURCE", WALK_SOURCE_HASH) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
