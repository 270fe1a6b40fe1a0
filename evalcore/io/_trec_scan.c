/* The two byte loops of the columnar TREC reader, compiled (optional; issue 16).
 *
 * evalcore/io/trec_bytes.py holds the numpy versions of both and is the reference:
 * tests/test_trec_columnar.py checks these against them and runs every reader test with
 * and without this module. Built by setup.py when a C compiler is there; without it the
 * numpy versions run (same results, slower).
 *
 *   split(block, sep, width, out) -> lines, or -1 (decline)
 *       block: bytes of whole lines, ending with LF; out: writable int64 buffer of
 *       2 * width * capacity (capacity >= the number of LFs): row 2j holds field j's
 *       start, row 2j+1 its end (the separator or LF after it), capacity apart.
 *       Empty lines are skipped; a line that does not hold exactly width non-empty
 *       fields separated by single sep bytes declines.
 *   words(data, starts, ends, out) -> None
 *       data[starts[i]:ends[i]] of every i zero-padded into row i of out (uint64 words,
 *       n_words a row; every field at most 8 * n_words bytes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *
split(PyObject *self, PyObject *args)
{
    Py_buffer block, out;
    int sep, width;
    if (!PyArg_ParseTuple(args, "y*iiw*", &block, &sep, &width, &out))
        return NULL;
    const unsigned char *a = block.buf;
    const Py_ssize_t n = block.len;
    Py_ssize_t capacity = width > 0 ? out.len / (Py_ssize_t)(2 * width * sizeof(int64_t)) : 0;
    int64_t *o = out.buf;
    Py_ssize_t lines = -1;
    if (width < 1 || n == 0 || a[n - 1] != '\n')
        goto done;
    Py_ssize_t line = 0, p = 0;
    Py_BEGIN_ALLOW_THREADS
    while (p < n) {
        if (a[p] == '\n') { /* an empty line */
            p++;
            continue;
        }
        if (line >= capacity)
            goto out_of_room;
        for (int j = 0; j < width; j++) {
            Py_ssize_t start = p;
            while (a[p] != '\n' && a[p] != sep)
                p++;
            if (p == start)
                goto declined; /* an empty field */
            o[(2 * j) * capacity + line] = start;
            o[(2 * j + 1) * capacity + line] = p;
            if (j < width - 1) {
                if (a[p] == '\n')
                    goto declined; /* too few fields */
                p++;
            } else if (a[p] != '\n') {
                goto declined; /* too many fields, or a separator before the line end */
            }
        }
        p++; /* the line end */
        line++;
    }
    lines = line;
    goto finished;
out_of_room:
declined:
    lines = -1;
finished:
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&block);
    PyBuffer_Release(&out);
    return PyLong_FromSsize_t(lines);
}

static PyObject *
words(PyObject *self, PyObject *args)
{
    Py_buffer data, starts, ends, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &data, &starts, &ends, &out))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t rows = starts.len / (Py_ssize_t)sizeof(int64_t);
    /* (the caller passes int64 starts and ends and a uint64 out; lengths checked here) */
    if (ends.len != starts.len || (rows && out.len % (rows * (Py_ssize_t)sizeof(uint64_t)))) {
        PyErr_SetString(PyExc_ValueError, "words: int64 starts and ends, uint64 rows out");
        goto done;
    }
    const Py_ssize_t row_bytes = rows ? out.len / rows : 0;
    const int64_t *s = starts.buf, *e = ends.buf;
    for (Py_ssize_t i = 0; i < rows; i++) {
        if (s[i] < 0 || e[i] < s[i] || e[i] > data.len || e[i] - s[i] > row_bytes) {
            PyErr_SetString(PyExc_ValueError, "words: a field outside the data or its row");
            goto done;
        }
    }
    unsigned char *o = out.buf;
    const unsigned char *d = data.buf;
    Py_BEGIN_ALLOW_THREADS
    memset(o, 0, (size_t)out.len);
    for (Py_ssize_t i = 0; i < rows; i++)
        memcpy(o + i * row_bytes, d + s[i], (size_t)(e[i] - s[i]));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"split", split, METH_VARARGS, "Fields of a block of whole lines (see the module)."},
    {"words", words, METH_VARARGS, "Fields as zero-padded uint64 words (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_trec_scan",
    "The columnar TREC reader's byte loops, compiled (evalcore.io.trec_bytes).", -1, methods,
};

PyMODINIT_FUNC
PyInit__trec_scan(void)
{
    return PyModule_Create(&module);
}
