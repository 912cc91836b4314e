/* The tagger's compiled kernels: the CRF's state scores, forward-backward
 * marginals and Viterbi path, and the two passes that lay out a document's
 * feature ids. Their Python faces (argument checks, numpy views of what comes
 * back) are deid_pipeline/tagger/crf_kernels.py and feature_kernels.py, which
 * document what each computes; this file documents only how.
 *
 * Why C: the kernels were numba functions, and every process that tagged paid
 * for numba's import and cache load (0.2-0.3 s of a run's start-up, 60-80 MiB
 * of LLVM), and a fresh install or a read-only site-packages compiled them
 * (about 8 s). Here they build with the package, import in a millisecond and
 * hold no state.
 *
 * The floating-point sums run in CRFsuite's order, term by term, as the numba
 * kernels ran them: no reassociation and no fused multiply-add (built with
 * -ffp-contract=off, never -ffast-math), so marginals are equal to the bit to
 * those of the plain loops in tests/test_crf_kernels.py. exp and log are the
 * C library's, as numba's were.
 *
 * Arrays arrive as buffers (C-contiguous, int64 or float64, checked by the
 * Python side and again by size here) and results leave as bytearrays that
 * the Python side views with numpy. The work runs without the GIL.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__GLIBC__)
/* The score loops vectorize four doubles wide where the CPU can (a clone per
 * CPU kind, chosen at load: glibc's ifunc, which musl lacks). */
#define WIDE_WHERE_ABLE __attribute__((target_clones("avx2", "default")))
#else
#define WIDE_WHERE_ABLE
#endif

typedef int64_t i64;

/* A new bytearray of ``n`` bytes (at least one) and where its bytes are. */
static PyObject *new_bytes(Py_ssize_t n, void **data) {
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n > 0 ? n : 1);
    if (out != NULL) {
        *data = PyByteArray_AS_STRING(out);
    }
    return out;
}

/* Whether ``buf`` holds exactly ``count`` items of ``size`` bytes; else an error. */
static int holds(const Py_buffer *buf, Py_ssize_t count, Py_ssize_t size,
                 const char *name) {
    if (count < 0 || buf->len != count * size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd",
                     name, buf->len, count * size);
        return 0;
    }
    return 1;
}

/* ---- the CRF ---------------------------------------------------------- */

/* Four doubles, read and written wherever they lie. */
typedef double v4 __attribute__((vector_size(32), aligned(8)));

/* Each token's state scores: its attributes' rows added in item order. */
WIDE_WHERE_ABLE
static void state_scores(const i64 *ids, const i64 *offsets, i64 n_tokens,
                         const double *rows, i64 width, double *state,
                         i64 n_labels, double *score) {
    for (i64 t = 0; t < n_tokens; t++) {
        for (i64 j = 0; j < width; j++) {
            score[j] = 0.0;
        }
        for (i64 k = offsets[t]; k < offsets[t + 1]; k++) {
            i64 a = ids[k];
            if (a >= 0) {
                const double *row = rows + a * width;
                for (i64 j = 0; j < width; j++) {
                    score[j] += row[j];
                }
            }
        }
        memcpy(state + t * n_labels, score, (size_t)n_labels * sizeof(double));
    }
}

/* out[j] = sum over k, in k order, of weights[k] * rows[k][j]: the
 * forward step (weights: the last position's alpha) and the backward one
 * (weights: beta times the next position's exp state). Four columns make a
 * vector, sixteen a block whose sums stay in registers while every row is
 * read once; each column's terms are still added one by one in row order,
 * so the sums are those of the plain loop to the bit. */
WIDE_WHERE_ABLE
static void weighted_rows(const double *restrict weights, i64 n_rows,
                          const double *restrict rows, i64 width,
                          double *restrict out) {
    i64 j = 0;
    for (; j + 16 <= width; j += 16) {
        v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0;
        for (i64 k = 0; k < n_rows; k++) {
            const double w = weights[k];
            const v4 wv = {w, w, w, w};
            const v4 *r = (const v4 *)(rows + k * width + j);
            a0 += wv * r[0];
            a1 += wv * r[1];
            a2 += wv * r[2];
            a3 += wv * r[3];
        }
        v4 *o = (v4 *)(out + j);
        o[0] = a0;
        o[1] = a1;
        o[2] = a2;
        o[3] = a3;
    }
    for (; j + 4 <= width; j += 4) {
        v4 a0 = {0.0, 0.0, 0.0, 0.0};
        for (i64 k = 0; k < n_rows; k++) {
            const double w = weights[k];
            const v4 wv = {w, w, w, w};
            a0 += wv * *(const v4 *)(rows + k * width + j);
        }
        *(v4 *)(out + j) = a0;
    }
    for (; j < width; j++) {
        double a = 0.0;
        for (i64 k = 0; k < n_rows; k++) {
            a += weights[k] * rows[k * width + j];
        }
        out[j] = a;
    }
}

/* Forward-backward, scaled per position as CRFsuite does. ``exp_trans`` and
 * ``exp_trans_t`` are n_labels x width with zero columns past the labels;
 * ``work`` holds 3 * width + 4 * n_tokens * n_labels + 2 * n_tokens doubles. */
WIDE_WHERE_ABLE
static double forward_backward(const double *state, i64 n_tokens, i64 n_labels,
                               const double *restrict exp_trans,
                               const double *restrict exp_trans_t, i64 width,
                               double *restrict marginals, double *work) {
    double *restrict cur = work;
    double *restrict prev = cur + width;
    double *restrict exp_state = prev + width;
    double *restrict alpha = exp_state + n_tokens * n_labels;
    double *restrict beta = alpha + n_tokens * n_labels;
    double *restrict shift = beta + n_tokens * n_labels;
    double *restrict scale = shift + n_tokens;
    double *restrict weight = scale + n_tokens;
    for (i64 j = 0; j < width; j++) {
        cur[j] = 0.0;
        prev[j] = 0.0;
    }
    for (i64 t = 0; t < n_tokens; t++) {
        const double *s = state + t * n_labels;
        double top = s[0];
        for (i64 j = 1; j < n_labels; j++) {
            if (s[j] > top) {
                top = s[j];
            }
        }
        shift[t] = top;
        for (i64 j = 0; j < n_labels; j++) {
            exp_state[t * n_labels + j] = exp(s[j] - top);
        }
    }
    for (i64 t = 0; t < n_tokens; t++) {
        const double *e = exp_state + t * n_labels;
        if (t == 0) {
            for (i64 j = 0; j < n_labels; j++) {
                cur[j] = e[j];
            }
        } else {
            weighted_rows(prev, n_labels, exp_trans, width, cur);
            for (i64 j = 0; j < n_labels; j++) {
                cur[j] *= e[j];
            }
        }
        double total = 0.0;
        for (i64 j = 0; j < n_labels; j++) {
            total += cur[j];
        }
        scale[t] = total != 0.0 ? 1.0 / total : 1.0;
        for (i64 j = 0; j < n_labels; j++) {
            cur[j] *= scale[t];
            prev[j] = cur[j];
            alpha[t * n_labels + j] = cur[j];
        }
    }
    /* beta[t, i] = scale[t] * sum_j exp_trans[i, j] * exp_state[t+1, j] *
     * beta[t+1, j], summed over j in id order (CRFsuite's dot product). */
    for (i64 j = 0; j < n_labels; j++) {
        prev[j] = scale[n_tokens - 1];
        beta[(n_tokens - 1) * n_labels + j] = prev[j];
    }
    for (i64 t = n_tokens - 2; t >= 0; t--) {
        const double *e = exp_state + (t + 1) * n_labels;
        for (i64 j = 0; j < n_labels; j++) {
            weight[j] = prev[j] * e[j];
        }
        weighted_rows(weight, n_labels, exp_trans_t, width, cur);
        for (i64 i = 0; i < n_labels; i++) {
            prev[i] = cur[i] * scale[t];
            beta[t * n_labels + i] = prev[i];
        }
    }
    double log_norm = 0.0;
    for (i64 t = 0; t < n_tokens; t++) {
        for (i64 j = 0; j < n_labels; j++) {
            i64 k = t * n_labels + j;
            marginals[k] = alpha[k] * beta[k] / scale[t];
        }
        log_norm += shift[t] - log(scale[t]);
    }
    return log_norm;
}

/* marginal_arrays(ids, offsets, state_rows, width, trans, n_labels)
 *   -> (state bytes, marginals bytes, log_norm) */
static PyObject *marginal_arrays(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer ids, offsets, rows, trans;
    Py_ssize_t width, n_labels;
    if (!PyArg_ParseTuple(args, "y*y*y*ny*n", &ids, &offsets, &rows, &width,
                          &trans, &n_labels)) {
        return NULL;
    }
    PyObject *state_out = NULL, *marg_out = NULL, *result = NULL;
    double *work = NULL;
    Py_ssize_t n_ids = ids.len / 8, n_tokens = offsets.len / 8 - 1;
    Py_ssize_t n_attrs = width > 0 ? rows.len / 8 / width : 0;
    if (width < n_labels || n_labels < 1 || n_tokens < 1
        || !holds(&ids, n_ids, 8, "ids") || !holds(&offsets, n_tokens + 1, 8, "offsets")
        || !holds(&rows, n_attrs * width, 8, "state_rows")
        || !holds(&trans, n_labels * n_labels, 8, "transitions")) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "marginal_arrays: bad shapes");
        }
        goto done;
    }
    const i64 *id = ids.buf, *off = offsets.buf;
    if (off[0] != 0 || off[n_tokens] != n_ids) {
        PyErr_SetString(PyExc_ValueError, "offsets do not span the ids");
        goto done;
    }
    for (Py_ssize_t t = 0; t < n_tokens; t++) {
        if (off[t + 1] < off[t]) {
            PyErr_SetString(PyExc_ValueError, "offsets decrease");
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n_ids; k++) {
        if (id[k] >= n_attrs) {
            PyErr_Format(PyExc_ValueError, "attribute id %lld of %zd",
                         (long long)id[k], n_attrs);
            goto done;
        }
    }
    double *state = NULL, *marginals = NULL;
    Py_ssize_t cells = n_tokens * n_labels;
    state_out = new_bytes(cells * 8, (void **)&state);
    marg_out = new_bytes(cells * 8, (void **)&marginals);
    /* score (width), exp_trans and its transpose (n_labels x width each), then
     * forward_backward's own (see there). */
    Py_ssize_t n_work = width + 2 * n_labels * width + 3 * width + 4 * cells
                        + 2 * n_tokens;
    work = PyMem_RawMalloc((size_t)n_work * sizeof(double));
    if (state_out == NULL || marg_out == NULL || work == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    double log_norm;
    Py_BEGIN_ALLOW_THREADS
    double *score = work;
    double *exp_trans = score + width;
    double *exp_trans_t = exp_trans + n_labels * width;
    const double *tr = trans.buf;
    for (Py_ssize_t i = 0; i < n_labels; i++) {
        for (Py_ssize_t j = 0; j < width; j++) {
            exp_trans[i * width + j] = j < n_labels ? exp(tr[i * n_labels + j]) : 0.0;
            exp_trans_t[i * width + j] = 0.0;
        }
    }
    for (Py_ssize_t i = 0; i < n_labels; i++) {
        for (Py_ssize_t j = 0; j < n_labels; j++) {
            exp_trans_t[j * width + i] = exp_trans[i * width + j];
        }
    }
    state_scores(id, off, n_tokens, rows.buf, width, state, n_labels, score);
    log_norm = forward_backward(state, n_tokens, n_labels, exp_trans, exp_trans_t,
                                width, marginals, exp_trans_t + n_labels * width);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("OOd", state_out, marg_out, log_norm);
done:
    PyMem_RawFree(work);
    Py_XDECREF(state_out);
    Py_XDECREF(marg_out);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&trans);
    return result;
}

/* Best label path; ties go to the lowest label id, as in CRFsuite. The
 * forward pass keeps each label's best score; the back-pointer is recomputed
 * only for the label the path takes (the first previous label that reaches
 * that score in id order). ``score`` holds n_tokens * n_labels doubles. */
WIDE_WHERE_ABLE
static double viterbi(const double *state, i64 n_tokens, i64 n_labels,
                      const double *trans, double *score, i64 *path) {
    memcpy(score, state, (size_t)n_labels * sizeof(double));
    for (i64 t = 1; t < n_tokens; t++) {
        const double *prev = score + (t - 1) * n_labels;
        double *best = score + t * n_labels;
        for (i64 j = 0; j < n_labels; j++) {
            best[j] = -INFINITY;
        }
        for (i64 i = 0; i < n_labels; i++) {
            const double p = prev[i];
            const double *row = trans + i * n_labels;
            for (i64 j = 0; j < n_labels; j++) {
                const double x = p + row[j];
                best[j] = x > best[j] ? x : best[j];
            }
        }
        for (i64 j = 0; j < n_labels; j++) {
            best[j] += state[t * n_labels + j];
        }
    }
    const double *last = score + (n_tokens - 1) * n_labels;
    double top = -INFINITY;
    i64 arg = 0;
    for (i64 j = 0; j < n_labels; j++) {
        if (top < last[j]) {
            top = last[j];
            arg = j;
        }
    }
    path[n_tokens - 1] = arg;
    for (i64 t = n_tokens - 1; t > 0; t--) {
        const i64 j = path[t];
        const double *prev = score + (t - 1) * n_labels;
        double target = -INFINITY;
        arg = 0;
        for (i64 i = 0; i < n_labels; i++) {
            const double value = prev[i] + trans[i * n_labels + j];
            if (target < value) {
                target = value;
                arg = i;
            }
        }
        path[t - 1] = arg;
    }
    double total = state[path[0]];
    for (i64 t = 1; t < n_tokens; t++) {
        total += trans[path[t - 1] * n_labels + path[t]] + state[t * n_labels + path[t]];
    }
    return total;
}

/* best_path(state, n_labels, trans) -> (path bytes, score) */
static PyObject *best_path(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer state, trans;
    Py_ssize_t n_labels;
    if (!PyArg_ParseTuple(args, "y*ny*", &state, &n_labels, &trans)) {
        return NULL;
    }
    PyObject *path_out = NULL, *result = NULL;
    double *score = NULL;
    Py_ssize_t n_tokens = n_labels > 0 ? state.len / 8 / n_labels : 0;
    if (n_labels < 1 || n_tokens < 1 || !holds(&state, n_tokens * n_labels, 8, "state")
        || !holds(&trans, n_labels * n_labels, 8, "transitions")) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "best_path: bad shapes");
        }
        goto done;
    }
    i64 *path = NULL;
    path_out = new_bytes(n_tokens * 8, (void **)&path);
    score = PyMem_RawMalloc((size_t)(n_tokens * n_labels) * sizeof(double));
    if (path_out == NULL || score == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    double total;
    Py_BEGIN_ALLOW_THREADS
    total = viterbi(state.buf, n_tokens, n_labels, trans.buf, score, path);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("Od", path_out, total);
done:
    PyMem_RawFree(score);
    Py_XDECREF(path_out);
    PyBuffer_Release(&state);
    PyBuffer_Release(&trans);
    return result;
}

/* ---- the features' layout ------------------------------------------------ */

/* How many of the ``n`` ascending ``values`` are below ``x`` (searchsorted left). */
static i64 count_below(const i64 *values, i64 n, i64 x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = lo + (hi - lo) / 2;
        if (values[mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* How many of the ``n`` ascending ``values`` are at most ``x`` (side right). */
static i64 count_to(const i64 *values, i64 n, i64 x) {
    return x == INT64_MAX ? n : count_below(values, n, x + 1);
}

static int by_value(const void *a, const void *b) {
    i64 x = *(const i64 *)a, y = *(const i64 *)b;
    return (x > y) - (x < y);
}

/* Per token, the sum of ``values`` over the tokens at most ``reach`` away. */
static void within_reach(const i64 *values, i64 n, i64 reach, i64 *out,
                         i64 *running) {
    running[0] = 0;
    for (i64 t = 0; t < n; t++) {
        running[t + 1] = running[t] + values[t];
    }
    for (i64 t = 0; t < n; t++) {
        i64 hi = t + reach < n - 1 ? t + reach : n - 1;
        i64 lo = t - reach > 0 ? t - reach : 0;
        out[t] = running[hi + 1] - running[lo];
    }
}

/* Per token, how often its word stands at most ``reach`` tokens away. */
static int counts_within_reach(const i64 *word, i64 n, i64 reach, i64 *out) {
    if (n <= reach + 1) {  /* every token reaches every other: count them all */
        i64 top = 0;
        for (i64 t = 0; t < n; t++) {
            top = word[t] > top ? word[t] : top;
        }
        i64 *counts = calloc((size_t)top + 1, sizeof(i64));
        if (counts == NULL) {
            return 0;
        }
        for (i64 t = 0; t < n; t++) {
            counts[word[t]] += 1;
        }
        for (i64 t = 0; t < n; t++) {
            out[t] = counts[word[t]];
        }
        free(counts);
        return 1;
    }
    i64 *key = malloc((size_t)(n > 0 ? n : 1) * sizeof(i64));
    if (key == NULL) {
        return 0;
    }
    for (i64 t = 0; t < n; t++) {
        key[t] = word[t] * (n + 1) + t;
    }
    qsort(key, (size_t)n, sizeof(i64), by_value);
    for (i64 t = 0; t < n; t++) {
        i64 base = word[t] * (n + 1);
        i64 lo = count_below(key, n, base + (t - reach > 0 ? t - reach : 0));
        i64 hi = count_to(key, n, base + (t + reach < n - 1 ? t + reach : n - 1));
        out[t] = hi - lo;
    }
    free(key);
    return 1;
}

/* layout_codes(newlines, starts, ends, code, word, upper, lower, line_max,
 *              key_reach, document_reach, short_line_max, n_cases)
 *   -> bytes of 7 int64 columns (chunk_start, chunk_end, cpos, line_pos,
 *      key_word, df, dcase) and bytes of short_line (bool) */
static PyObject *layout_codes(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer newlines, starts, ends, code, word, upper, lower;
    Py_ssize_t line_max, key_reach, document_reach, short_line_max, n_cases;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*nnnnn", &newlines, &starts, &ends,
                          &code, &word, &upper, &lower, &line_max, &key_reach,
                          &document_reach, &short_line_max, &n_cases)) {
        return NULL;
    }
    PyObject *columns_out = NULL, *short_out = NULL, *result = NULL;
    i64 *scratch = NULL;
    const Py_ssize_t n = starts.len / 8;
    if (n < 1 || line_max < 1 || !holds(&starts, n, 8, "starts")
        || !holds(&ends, n, 8, "ends") || !holds(&code, n, 8, "code")
        || !holds(&word, n, 8, "word") || !holds(&upper, n, 8, "upper")
        || !holds(&lower, n, 8, "lower")
        || !holds(&newlines, newlines.len / 8, 8, "newlines")) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "layout_codes: no tokens");
        }
        goto done;
    }
    const i64 *nl = newlines.buf, *st = starts.buf, *en = ends.buf, *cd = code.buf;
    const i64 *wd = word.buf, *up_in = upper.buf, *low_in = lower.buf;
    const i64 n_nl = newlines.len / 8;
    for (Py_ssize_t t = 0; t < n; t++) {
        if (wd[t] < 0) {
            PyErr_SetString(PyExc_ValueError, "layout_codes: negative word id");
            goto done;
        }
    }
    i64 *columns = NULL;
    unsigned char *short_line = NULL;
    columns_out = new_bytes(7 * n * 8, (void **)&columns);
    short_out = new_bytes(n, (void **)&short_line);
    /* first, line, pos, per_line, counts, up, letters (n each), running (n+1) */
    scratch = PyMem_RawMalloc((size_t)(8 * n + 1) * sizeof(i64));
    if (columns_out == NULL || short_out == NULL || scratch == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    i64 *chunk_start = columns, *chunk_end = columns + n, *cpos = columns + 2 * n;
    i64 *line_pos = columns + 3 * n, *key_word = columns + 4 * n;
    i64 *df = columns + 5 * n, *dcase = columns + 6 * n;
    i64 *first = scratch, *line = scratch + n, *pos = scratch + 2 * n;
    i64 *per_line = scratch + 3 * n, *counts = scratch + 4 * n;
    i64 *up = scratch + 5 * n, *letters = scratch + 6 * n, *running = scratch + 7 * n;
    /* A token starts a line when a newline stands between it and the one
     * before; a very long line is read as lines of line_max tokens. */
    i64 current = -1, head = 0;
    for (i64 t = 0; t < n; t++) {
        int broken = t == 0 || count_below(nl, n_nl, st[t]) > count_below(nl, n_nl, en[t - 1]);
        if (broken || (t - head) % line_max == 0) {
            current += 1;
            head = t;
        }
        first[t] = head;
        line[t] = current;
        pos[t] = t - head;
    }
    for (i64 k = 0; k <= current; k++) {
        per_line[k] = 0;
    }
    for (i64 t = 0; t < n; t++) {
        per_line[line[t]] += 1;
    }
    /* Tokens cover every non-space character, so a whitespace-delimited chunk
     * is a run of tokens that touch. */
    for (i64 t = 0; t < n;) {
        i64 u = t;
        while (u + 1 < n && st[u + 1] == en[u]) {
            u += 1;
        }
        for (i64 k = t; k <= u; k++) {
            chunk_start[k] = st[t];
            chunk_end[k] = en[u];
        }
        t = u + 1;
    }
    if (n <= document_reach + 1) {  /* every token reaches every other */
        i64 up_total = 0, letter_total = 0;
        for (i64 t = 0; t < n; t++) {
            up_total += up_in[t];
            letter_total += up_in[t] + low_in[t];
        }
        for (i64 t = 0; t < n; t++) {
            up[t] = up_total;
            letters[t] = letter_total;
        }
    } else {
        within_reach(up_in, n, document_reach, up, running);
        within_reach(low_in, n, document_reach, letters, running);
        for (i64 t = 0; t < n; t++) {
            letters[t] += up[t];
        }
    }
    ok = counts_within_reach(wd, n, document_reach, counts);
    i64 last_key = -1;
    for (i64 t = 0; ok && t < n; t++) {
        if (chunk_end[t] - chunk_start[t] == en[t] - st[t]) {
            cpos[t] = -1;
        } else if (st[t] == chunk_start[t]) {
            cpos[t] = 0;
        } else if (en[t] == chunk_end[t]) {
            cpos[t] = 1;
        } else {
            cpos[t] = 2;
        }
        line_pos[t] = pos[t] < 4 ? pos[t] : 4;
        i64 c = cd[t];
        i64 kase = (c & 7) - 1;
        /* A KEY: is a colon after a word, not first on its line; it keys the
         * tokens after it on the line, until the next one. */
        key_word[t] = (t > 0 && last_key >= first[t] && t - last_key <= key_reach)
                      ? last_key - 1 : -1;
        if ((c & 8) != 0 && pos[t] > 0 && (cd[t - 1] & 7) - 1 >= 0) {
            last_key = t;
        }
        df[t] = -1;
        dcase[t] = -1;
        if (kase >= 0) {
            i64 m = counts[t];
            df[t] = m <= 1 ? 0 : m <= 2 ? 1 : m <= 4 ? 2 : 3;
            i64 around;
            if (letters[t] == 0 || (double)up[t] >= 0.8 * (double)letters[t]) {
                around = 0;
            } else if ((double)up[t] <= 0.03 * (double)letters[t]) {
                around = 1;
            } else {
                around = 2;
            }
            int starts_sentence = pos[t] == 0 || (t > 0 && (cd[t - 1] & 16) != 0);
            dcase[t] = 2 * n_cases * around + 2 * kase + (starts_sentence ? 1 : 0);
        }
        short_line[t] = per_line[line[t]] <= short_line_max;
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyTuple_Pack(2, columns_out, short_out);
done:
    PyMem_RawFree(scratch);
    Py_XDECREF(columns_out);
    Py_XDECREF(short_out);
    PyBuffer_Release(&newlines);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&code);
    PyBuffer_Release(&word);
    PyBuffer_Release(&upper);
    PyBuffer_Release(&lower);
    return result;
}

enum {
    POOL, BLOCK_START, BLOCK_LEN, BLOCK_OFFSETS, SLOT, CPOS, LINE_POS, KEY_WORD,
    DF, DCASE, SHORT_LINE, CHUNK_POOL, CHUNK_LEN, EXTRA_IDS, KEY_IDS, SPARSE_POOL,
    SPARSE_WHERE, SPARSE_LEN, PAIR_IDS, N_ARRAYS
};

/* lay_out_ids(block_pool, block_start, block_len, block_offsets, slot, cpos,
 *             line_pos, key_word, df, dcase, short_line, chunk_pool, chunk_len,
 *             extra_ids, line_base, df_base, dcase_base, key_ids, sparse_pool,
 *             sparse_where, sparse_len, pair_ids) -> (ids bytes, offsets bytes)
 * Every array int64 but short_line (one byte a token). */
static PyObject *lay_out_ids(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer b[N_ARRAYS];
    Py_ssize_t line_base, df_base, dcase_base;
    memset(b, 0, sizeof(b));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*y*y*nnny*y*y*y*y*",
                          &b[POOL], &b[BLOCK_START], &b[BLOCK_LEN], &b[BLOCK_OFFSETS],
                          &b[SLOT], &b[CPOS], &b[LINE_POS], &b[KEY_WORD], &b[DF],
                          &b[DCASE], &b[SHORT_LINE], &b[CHUNK_POOL], &b[CHUNK_LEN],
                          &b[EXTRA_IDS], &line_base, &df_base, &dcase_base,
                          &b[KEY_IDS], &b[SPARSE_POOL], &b[SPARSE_WHERE],
                          &b[SPARSE_LEN], &b[PAIR_IDS])) {
        for (int k = 0; k < N_ARRAYS; k++) {
            if (b[k].obj != NULL) {
                PyBuffer_Release(&b[k]);
            }
        }
        return NULL;
    }
    PyObject *ids_out = NULL, *offsets_out = NULL, *result = NULL;
    i64 *source = NULL, *sparse = NULL;
    const Py_ssize_t n = b[SLOT].len / 8, n_fields = b[BLOCK_OFFSETS].len / 8;
    const Py_ssize_t n_rows = n_fields > 0 ? b[BLOCK_START].len / 8 / n_fields : 0;
    const Py_ssize_t n_extra = b[EXTRA_IDS].len / 8;
    const Py_ssize_t n_where = b[SPARSE_WHERE].len / 8;
    if (n < 1 || n_fields < 1 || !holds(&b[SLOT], n, 8, "slot")
        || !holds(&b[BLOCK_START], n_rows * n_fields, 8, "block_start")
        || !holds(&b[BLOCK_LEN], n_rows * n_fields, 8, "block_len")
        || !holds(&b[CPOS], n, 8, "cpos") || !holds(&b[LINE_POS], n, 8, "line_pos")
        || !holds(&b[KEY_WORD], n, 8, "key_word") || !holds(&b[DF], n, 8, "df")
        || !holds(&b[DCASE], n, 8, "dcase") || !holds(&b[SHORT_LINE], n, 1, "short_line")
        || !holds(&b[SPARSE_LEN], n_where, 8, "sparse_len")
        || !holds(&b[PAIR_IDS], 2 * (n + 1), 8, "pair_ids") || n_extra < 1) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "lay_out_ids: bad shapes");
        }
        goto done;
    }
    const i64 *pool = b[POOL].buf, *block_start = b[BLOCK_START].buf;
    const i64 *block_len = b[BLOCK_LEN].buf, *block_offsets = b[BLOCK_OFFSETS].buf;
    const i64 *slot = b[SLOT].buf, *cpos = b[CPOS].buf, *line_pos = b[LINE_POS].buf;
    const i64 *key_word = b[KEY_WORD].buf, *df = b[DF].buf, *dcase = b[DCASE].buf;
    const unsigned char *short_line = b[SHORT_LINE].buf;
    const i64 *chunk_pool = b[CHUNK_POOL].buf, *chunk_len = b[CHUNK_LEN].buf;
    const i64 *extra = b[EXTRA_IDS].buf, *key_ids = b[KEY_IDS].buf;
    const i64 *sparse_pool = b[SPARSE_POOL].buf, *sparse_where = b[SPARSE_WHERE].buf;
    const i64 *sparse_len = b[SPARSE_LEN].buf, *pair_ids = b[PAIR_IDS].buf;
    /* Which block each field of each token reads (row 0, the pad, past
     * either end), and where each token's sparse ids start and how many. */
    source = PyMem_RawMalloc((size_t)(n * n_fields) * sizeof(i64));
    sparse = PyMem_RawMalloc((size_t)(2 * n) * sizeof(i64));
    i64 *offsets = NULL;
    offsets_out = new_bytes((n + 1) * 8, (void **)&offsets);
    if (source == NULL || sparse == NULL || offsets_out == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    i64 *sparse_start = sparse, *sparse_count = sparse + n;
    for (Py_ssize_t t = 0; t < n; t++) {
        sparse_start[t] = -1;
        sparse_count[t] = 0;
    }
    i64 at = 0;
    for (Py_ssize_t k = 0; k < n_where; k++) {
        i64 w = sparse_where[k];
        if (w < 0 || w >= n) {
            PyErr_SetString(PyExc_ValueError, "lay_out_ids: sparse token out of range");
            goto done;
        }
        sparse_start[w] = at;
        sparse_count[w] = sparse_len[k];
        at += sparse_len[k];
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        if (slot[t] < 0 || slot[t] >= n_rows) {
            PyErr_SetString(PyExc_ValueError, "lay_out_ids: row out of range");
            goto done;
        }
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        for (Py_ssize_t j = 0; j < n_fields; j++) {
            i64 u = t + block_offsets[j];
            source[t * n_fields + j] = (0 <= u && u < n) ? slot[u] : 0;
        }
    }
    offsets[0] = 0;
    i64 chunk = -1;
    for (Py_ssize_t t = 0; t < n; t++) {
        i64 size = 0;
        for (Py_ssize_t j = 0; j < n_fields; j++) {
            size += block_len[source[t * n_fields + j] * n_fields + j];
        }
        if (cpos[t] == 0) {
            chunk += 1;
        }
        if (cpos[t] >= 0) {
            size += chunk_len[chunk] + 1;
        }
        size += 1;  /* line position */
        if (key_word[t] >= 0) {
            size += 1;
        }
        if (df[t] >= 0) {
            size += 2;
        }
        if (short_line[t]) {
            size += 1;
        }
        size += sparse_count[t] + 2;
        offsets[t + 1] = offsets[t] + size;
    }
    i64 *ids = NULL;
    ids_out = new_bytes(offsets[n] * 8, (void **)&ids);
    if (ids_out == NULL) {
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    i64 out = 0, chunk_at = 0, key = -1, last_key = -2;
    chunk = -1;
    for (Py_ssize_t t = 0; t < n; t++) {
        for (Py_ssize_t j = 0; j < n_fields; j++) {
            i64 r = source[t * n_fields + j];
            i64 start = block_start[r * n_fields + j];
            for (i64 k = 0; k < block_len[r * n_fields + j]; k++) {
                ids[out++] = pool[start + k];
            }
        }
        if (cpos[t] == 0) {
            if (chunk >= 0) {
                chunk_at += chunk_len[chunk];
            }
            chunk += 1;
        }
        if (cpos[t] >= 0) {
            for (i64 k = 0; k < chunk_len[chunk]; k++) {
                ids[out++] = chunk_pool[chunk_at + k];
            }
            ids[out++] = extra[cpos[t]];
        }
        ids[out++] = extra[line_base + line_pos[t]];
        if (key_word[t] >= 0) {
            if (key_word[t] != last_key) {
                key += 1;
                last_key = key_word[t];
            }
            ids[out++] = key_ids[key];
        }
        if (df[t] >= 0) {
            ids[out++] = extra[df_base + df[t]];
            ids[out++] = extra[dcase_base + dcase[t]];
        }
        if (short_line[t]) {
            ids[out++] = extra[n_extra - 1];
        }
        for (i64 k = 0; k < sparse_count[t]; k++) {
            ids[out++] = sparse_pool[sparse_start[t] + k];
        }
        ids[out++] = pair_ids[2 * t + 1];
        ids[out++] = pair_ids[2 * (t + 1)];
    }
    Py_END_ALLOW_THREADS
    result = PyTuple_Pack(2, ids_out, offsets_out);
done:
    PyMem_RawFree(source);
    PyMem_RawFree(sparse);
    Py_XDECREF(ids_out);
    Py_XDECREF(offsets_out);
    for (int k = 0; k < N_ARRAYS; k++) {
        PyBuffer_Release(&b[k]);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"marginal_arrays", marginal_arrays, METH_VARARGS, NULL},
    {"best_path", best_path, METH_VARARGS, NULL},
    {"layout_codes", layout_codes, METH_VARARGS, NULL},
    {"lay_out_ids", lay_out_ids, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels",
    "The tagger's compiled kernels (see crf_kernels.py, feature_kernels.py).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
