/* Pooling: MaxPool, AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool,
 * GlobalLpPool (kernels in runtime/c/pool.h; window geometry in ops/conv.c). */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/pool.h"

static const int DTS_MAXPOOL[] = {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_UINT8, 0};

static int is_global(const Node *n) { return !strncmp(n->op_type, "Global", 6); }

/* Geometry of a windowed pool; global pools are one window over the
 * flattened spatial dims. */
static void pool_geom(Node *n, ConvGeom *g)
{
    Tensor *x = n->in[0];
    if (is_global(n)) {
        if (x->rank < 2) fail("input '%s' is %s; %s needs N x C x ...", x->name, tensor_shape_str(x), n->op_type);
        memset(g, 0, sizeof *g);
        g->nsp = x->rank - 2;
        int64_t sp = 1;
        for (int i = 2; i < x->rank; i++) sp *= x->dims[i];
        for (int i = 0; i < 3; i++) g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        if (sp < 1) fail("input '%s' (%s) has an empty spatial dimension", x->name, tensor_shape_str(x));
        g->in[2] = g->k[2] = sp;
        return;
    }
    const int64_t *ks;
    int nk = attr_ints(n, "kernel_shape", &ks);
    if (!nk) fail("required attribute 'kernel_shape' is missing");
    conv_geom_init(n, x, ks, nk, g);
    conv_geom_forward(n, g, (int)attr_i(n, "ceil_mode"));
}

void infer_pool(Node *n)
{
    Tensor *x = n->in[0];
    int is_max = strstr(n->op_type, "MaxPool") != NULL;
    need_dtype(n, x, is_max ? DTS_MAXPOOL : DTS_FLOAT);
    ConvGeom g;
    pool_geom(n, &g);
    int64_t dims[MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 2; i < x->rank; i++) dims[i] = is_global(n) ? 1 : g.out[3 - g.nsp + (i - 2)];
    set_out(n, 0, x->dtype, x->rank, dims);
    if (n->nout > 1) {
        if (attr_i(n, "storage_order") != 0 && attr_i(n, "storage_order") != 1)
            fail("storage_order must be 0 or 1");
        set_out(n, 1, DT_INT64, x->rank, dims);
    }
}

/* parameters: runtime/c/params/pool.h */
void lower_pool(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int is_max = strstr(n->op_type, "MaxPool") != NULL, is_lp = strstr(n->op_type, "LpPool") != NULL;
    ConvGeom g;
    pool_geom(n, &g);
    KCall *c = lower_call(L, xfmt("o2c_%s_%s", is_max ? "maxpool" : "avgpool", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    for (int i = 0; i < 3; i++) {
        c->k[O2C_POOL_IN + i] = g.in[i];
        c->k[O2C_POOL_OUT + i] = g.out[i];
        c->k[O2C_POOL_K + i] = g.k[i];
        c->k[O2C_POOL_S + i] = g.s[i];
        c->k[O2C_POOL_D + i] = g.d[i];
        c->k[O2C_POOL_PB + i] = g.pb[i];
        c->k[O2C_POOL_PE + i] = g.pe[i];
    }
    if (is_max) {
        if (n->nout > 1 && n->out[1]) {
            c->y[1] = n->out[1];
            c->k[O2C_POOL_MODE] = attr_i(n, "storage_order");
        }
        c->f[O2C_POOL_F_PARAM] = x->dtype == DT_INT8 ? -128.0 : x->dtype == DT_UINT8 ? 0.0 : -INFINITY;
        /* the C target: 2-D float pools without indices by rows, separable
         * (mnist's 2x2 pool over 8 x 28 x 28: 4.4 -> 1.5 us; YOLOX's SPP) */
        if (L->tiled && x->dtype == DT_FLOAT && !c->y[1] && g.in[0] == 1 && g.k[0] == 1 && g.out[0] == 1 &&
            g.out[2] > 0) {
            int64_t vw = (g.out[2] - 1) * g.s[2] + (g.k[2] - 1) * g.d[2] + 1;   /* the padded row (pool.h) */
            c->kernel = kernel_find("o2c_maxpool_rows_f32");
            c->count = tensor_numel(y) / g.out[2];
            c->y[1] = lower_temp(L, DT_FLOAT, 1, &vw);
        }
    } else if (is_lp) {
        double pv = attr_f(n, "p");
        if (!(pv > 0)) fail("p must be positive, got %g", pv);
        c->k[O2C_POOL_MODE] = 2;
        c->f[O2C_POOL_F_PARAM] = pv;
    } else {
        c->k[O2C_POOL_MODE] = is_global(n) ? 0 : attr_i(n, "count_include_pad") ? 1 : 0;
        /* the C target: a global float average by contiguous rows */
        if (L->tiled && x->dtype == DT_FLOAT && is_global(n) && tensor_numel(y) > 0) {
            c->kernel = kernel_find("o2c_gavgpool_rows_f32");
            c->count = tensor_numel(y);
        }
    }
}
