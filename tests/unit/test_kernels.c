/* Unit tests of the runtime kernels (runtime/c/FAMILY.h), called through the
 * compiler's registry the way constant folding calls them, with expected
 * values computed by hand. */
#include <math.h>

#include "o2c_test.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/params/matmul.h"
#include "../../runtime/c/params/movement.h"

static o2c_kernel_fn K(const char *name)
{
    const Kernel *k = kernel_find(name);
    if (!k) fail_msg("no kernel named %s", name);
    assert_non_null(k->fn);
    return k->fn;
}

static void test_registry(void **state)
{
    (void)state;
    assert_null(kernel_find("o2c_no_such_kernel"));
    const Kernel *k = kernel_find("o2c_matmul_f32");
    assert_non_null(k);
    assert_string_equal(k->file, "matmul.h");
    k = kernel_find("o2c_Relu_f32");
    assert_non_null(k);
    assert_string_equal(k->file, "elementwise.h");
    assert_non_null(k->instance);
    assert_non_null(strstr(k->instance, "o2c_Relu_f32"));
    assert_non_null(kernel_find("o2c_Add_i64"));
    assert_non_null(kernel_find("o2c_cast_f32_b"));
    assert_non_null(kernel_find("o2c_copy"));
    assert_non_null(kernel_find("o2c_fill"));
    assert_non_null(kernel_find("o2c_where"));
}

/* Y (2x2) = A (2x3) * B (3x2) */
static void test_matmul(void **state)
{
    (void)state;
    const float A[6] = {1, 2, 3, 4, 5, 6};
    const float B[6] = {7, 8, 9, 10, 11, 12};
    float Y[4] = {0};
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[0] = A; p.x[1] = B; p.y[0] = Y;
    p.k[O2C_MATMUL_M] = 2; p.k[O2C_MATMUL_N] = 2; p.k[O2C_MATMUL_K] = 3;     /* M N K */
    p.k[O2C_MATMUL_SAM] = 3; p.k[O2C_MATMUL_SAK] = 1;                 /* A row-major */
    p.k[O2C_MATMUL_SBK] = 2; p.k[O2C_MATMUL_SBN] = 1;                 /* B row-major */
    p.f[O2C_MATMUL_F_ALPHA] = 1.0;
    p.ff[O2C_MATMUL_F_ALPHA] = (float)p.f[O2C_MATMUL_F_ALPHA];   /* float kernels read the float copies */
    K("o2c_matmul_f32")(0, 4, &p);
    const float want[4] = {58, 64, 139, 154};
    assert_memory_equal(Y, want, sizeof want);

    /* Gemm style: alpha 2, B transposed through strides, C row (1x2) with beta 0.5 */
    const float Bt[6] = {7, 9, 11, 8, 10, 12};   /* B^T, 2x3 */
    const float C[2] = {100, 200};
    memset(Y, 0, sizeof Y);
    p.x[1] = Bt; p.x[2] = C;
    p.k[O2C_MATMUL_SBK] = 1; p.k[O2C_MATMUL_SBN] = 3;                 /* B[k][n] = Bt[n*3 + k] */
    p.k[O2C_MATMUL_HASC] = 1; p.k[O2C_MATMUL_SCM] = 0; p.k[O2C_MATMUL_SCN] = 1;  /* C broadcast over rows */
    p.f[O2C_MATMUL_F_ALPHA] = 2.0; p.f[O2C_MATMUL_F_BETA] = 0.5;
    p.ff[O2C_MATMUL_F_ALPHA] = (float)p.f[O2C_MATMUL_F_ALPHA]; p.ff[O2C_MATMUL_F_BETA] = (float)p.f[O2C_MATMUL_F_BETA];   /* float kernels read the float copies */
    K("o2c_matmul_f32")(0, 4, &p);
    const float want2[4] = {2 * 58 + 50, 2 * 64 + 100, 2 * 139 + 50, 2 * 154 + 100};
    assert_memory_equal(Y, want2, sizeof want2);

    /* a part of the index space only: the other elements are untouched */
    float Z[4] = {-1, -1, -1, -1};
    p.y[0] = Z;
    K("o2c_matmul_f32")(1, 3, &p);
    assert_true(Z[0] == -1 && Z[3] == -1);
    assert_true(Z[1] == want2[1] && Z[2] == want2[2]);
}

/* batched f64: A (2 batches of 1x2) times B (2x1) broadcast over the batch */
static void test_matmul_batched(void **state)
{
    (void)state;
    const double A[4] = {1, 2, 3, 4};
    const double B[2] = {10, 100};
    double Y[2] = {0};
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[0] = A; p.x[1] = B; p.y[0] = Y;
    p.k[O2C_MATMUL_M] = 1; p.k[O2C_MATMUL_N] = 1; p.k[O2C_MATMUL_K] = 2;
    p.k[O2C_MATMUL_SAM] = 2; p.k[O2C_MATMUL_SAK] = 1; p.k[O2C_MATMUL_SBK] = 1; p.k[O2C_MATMUL_SBN] = 1;
    p.k[O2C_MATMUL_R] = 1;           /* batch rank 1 */
    p.k[O2C_MATMUL_BDIMS] = 2;           /* batch dim */
    p.k[O2C_MATMUL_ASTR] = 2;          /* A batch stride: M*K */
    p.k[O2C_MATMUL_BSTR] = 0;          /* B broadcast */
    p.f[O2C_MATMUL_F_ALPHA] = 1.0;
    p.ff[O2C_MATMUL_F_ALPHA] = (float)p.f[O2C_MATMUL_F_ALPHA];   /* float kernels read the float copies */
    K("o2c_matmul_f64")(0, 2, &p);
    assert_true(Y[0] == 210 && Y[1] == 430);
}

/* broadcasting parameters as bcast_params (compiler/ops/elementwise.c) */
static void bcast(o2c_p *p, int rank, const int64_t *dims, int nx, const int64_t (*strides)[8])
{
    p->k[O2C_EW_RANK] = rank;
    for (int d = 0; d < rank; d++) p->k[O2C_EW_DIMS + d] = dims[d];
    for (int j = 0; j < nx; j++)
        for (int d = 0; d < rank; d++) p->k[O2C_EW_STR_AT(j) + d] = strides[j][d];
}

static void test_add_broadcast(void **state)
{
    (void)state;
    /* same shapes: O2C_EW_RANK 0 */
    const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
    float y[4];
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[0] = a; p.x[1] = b; p.y[0] = y;
    K("o2c_Add_f32")(0, 4, &p);
    const float w0[4] = {11, 22, 33, 44};
    assert_memory_equal(y, w0, sizeof w0);

    /* 2x3 + row (3): strides {3,1} and {0,1} */
    const float A[6] = {1, 2, 3, 4, 5, 6}, R[3] = {10, 20, 30};
    float Y[6];
    memset(&p, 0, sizeof p);
    p.x[0] = A; p.x[1] = R; p.y[0] = Y;
    bcast(&p, 2, (int64_t[]){2, 3}, 2, (const int64_t[][8]){{3, 1}, {0, 1}});
    K("o2c_Add_f32")(0, 6, &p);
    const float w1[6] = {11, 22, 33, 14, 25, 36};
    assert_memory_equal(Y, w1, sizeof w1);

    /* column (2x1) + row (1x3) -> 2x3, int32 */
    const int32_t col[2] = {100, 200}, row[3] = {1, 2, 3};
    int32_t Yi[6];
    memset(&p, 0, sizeof p);
    p.x[0] = col; p.x[1] = row; p.y[0] = Yi;
    bcast(&p, 2, (int64_t[]){2, 3}, 2, (const int64_t[][8]){{1, 0}, {0, 1}});
    K("o2c_Add_i32")(0, 6, &p);
    const int32_t w2[6] = {101, 102, 103, 201, 202, 203};
    assert_memory_equal(Yi, w2, sizeof w2);

    /* the same strides from bcast_strides() */
    Tensor tc = {.name = "c", .dtype = DT_INT32, .rank = 2, .dims = {2, 1}};
    Tensor tr = {.name = "r", .dtype = DT_INT32, .rank = 1, .dims = {3}};
    int64_t s[8];
    bcast_strides(&tc, 2, s);
    assert_int_equal(s[0], 1); assert_int_equal(s[1], 0);
    bcast_strides(&tr, 2, s);
    assert_int_equal(s[0], 0); assert_int_equal(s[1], 1);

    /* scalar - tensor, Sub keeps operand order */
    const int64_t sc = 10, v[3] = {1, 2, 3};
    int64_t yl[3];
    memset(&p, 0, sizeof p);
    p.x[0] = &sc; p.x[1] = v; p.y[0] = yl;
    bcast(&p, 1, (int64_t[]){3}, 2, (const int64_t[][8]){{0}, {1}});
    K("o2c_Sub_i64")(0, 3, &p);
    assert_true(yl[0] == 9 && yl[1] == 8 && yl[2] == 7);

    /* compare: bool output */
    const float l[3] = {1, 5, 3}, r[3] = {2, 2, 3};
    uint8_t yb[3];
    memset(&p, 0, sizeof p);
    p.x[0] = l; p.x[1] = r; p.y[0] = yb;
    K("o2c_Less_f32")(0, 3, &p);
    assert_true(yb[0] == 1 && yb[1] == 0 && yb[2] == 0);
}

static void test_unary_instances(void **state)
{
    (void)state;
    o2c_p p;
    memset(&p, 0, sizeof p);
    const float x[4] = {-2, -0.0f, 0.5f, 3};
    float y[4];
    p.x[0] = x; p.y[0] = y;
    K("o2c_Relu_f32")(0, 4, &p);
    assert_true(y[0] == 0 && y[1] == 0 && y[2] == 0.5f && y[3] == 3);

    const int32_t xi[3] = {-7, 0, 7};
    int32_t yi[3];
    p.x[0] = xi; p.y[0] = yi;
    K("o2c_Relu_i32")(0, 3, &p);
    assert_true(yi[0] == 0 && yi[1] == 0 && yi[2] == 7);

    const double xd[3] = {0, 2, -2};
    double yd[3];
    p.x[0] = xd; p.y[0] = yd;
    K("o2c_Sigmoid_f64")(0, 3, &p);
    assert_true(yd[0] == 0.5);
    assert_true(fabs(yd[1] - 1 / (1 + exp(-2.0))) < 1e-15);
    assert_true(fabs(yd[1] + yd[2] - 1) < 1e-15);

    float ys[3];
    const float xs[3] = {0, 2, -2};
    p.x[0] = xs; p.y[0] = ys;
    K("o2c_Sigmoid_f32")(0, 3, &p);
    assert_true(ys[0] == 0.5f);
    assert_true(fabsf(ys[1] - 0.880797078f) < 1e-6f);

    /* an attribute through O2C_EW_FA: LeakyRelu alpha */
    p.x[0] = x; p.y[0] = y;
    p.f[O2C_EW_FA] = 0.25;
    p.ff[O2C_EW_FA] = (float)p.f[O2C_EW_FA];   /* float kernels read the float copies */
    K("o2c_LeakyRelu_f32")(0, 4, &p);
    assert_true(y[0] == -0.5f && y[2] == 0.5f && y[3] == 3);

    /* Clip bounds through O2C_EW_FA, FB */
    p.f[O2C_EW_FA] = -1; p.f[O2C_EW_FB] = 1;
    p.ff[O2C_EW_FA] = (float)p.f[O2C_EW_FA]; p.ff[O2C_EW_FB] = (float)p.f[O2C_EW_FB];   /* float kernels read the float copies */
    K("o2c_Clip_f32")(0, 4, &p);
    assert_true(y[0] == -1 && y[2] == 0.5f && y[3] == 1);

    /* in place (y == x), as Mean's Scale uses it */
    float z[2] = {2, 4};
    p.x[0] = z; p.y[0] = z;
    p.f[O2C_EW_FA] = 0.5;
    p.ff[O2C_EW_FA] = (float)p.f[O2C_EW_FA];   /* float kernels read the float copies */
    K("o2c_Scale_f32")(0, 2, &p);
    assert_true(z[0] == 1 && z[1] == 2);
}

static void test_cast(void **state)
{
    (void)state;
    o2c_p p;
    memset(&p, 0, sizeof p);
    const float f[4] = {-2.75f, 0.5f, 3.99f, 100};
    int32_t i[4];
    p.x[0] = f; p.y[0] = i;
    K("o2c_cast_f32_i32")(0, 4, &p);           /* truncation toward zero */
    assert_true(i[0] == -2 && i[1] == 0 && i[2] == 3 && i[3] == 100);

    const int64_t l[3] = {-1, 0, 1LL << 40};
    double d[3];
    p.x[0] = l; p.y[0] = d;
    K("o2c_cast_i64_f64")(0, 3, &p);
    assert_true(d[0] == -1 && d[1] == 0 && d[2] == 1099511627776.0);

    const float fb[4] = {0, -0.0f, 0.1f, -3};
    uint8_t b[4];
    p.x[0] = fb; p.y[0] = b;
    K("o2c_cast_f32_b")(0, 4, &p);
    assert_true(b[0] == 0 && b[1] == 0 && b[2] == 1 && b[3] == 1);

    const uint8_t bb[3] = {0, 1, 1};
    float bf[3];
    p.x[0] = bb; p.y[0] = bf;
    K("o2c_cast_b_f32")(0, 3, &p);
    assert_true(bf[0] == 0 && bf[1] == 1 && bf[2] == 1);

    const int32_t big[2] = {300, -1};
    uint8_t u[2];
    p.x[0] = big; p.y[0] = u;
    K("o2c_cast_i32_u8")(0, 2, &p);            /* modulo 256 */
    assert_true(u[0] == 44 && u[1] == 255);
}

/* float16/bfloat16 conversions: known values, rounding to nearest even,
 * overflow, subnormals, and a round trip of every half value. */
static void test_half_casts(void **state)
{
    (void)state;
    o2c_p p;
    memset(&p, 0, sizeof p);
    const float f[10] = {1.0f, -2.0f, 65504.0f, 65520.0f, 5.9604645e-8f, 2.9802322e-8f,
                         1.00048828125f /* tie: rounds to even 1.0 */, 1.00146484375f /* tie: up */, 0.0f, -0.0f};
    uint16_t h[10];
    p.x[0] = f; p.y[0] = h;
    K("o2c_cast_f32_f16")(0, 10, &p);
    const uint16_t want[10] = {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x3c00, 0x3c02, 0x0000, 0x8000};
    for (int i = 0; i < 10; i++) assert_int_equal(h[i], want[i]);

    static uint16_t all[65536], back[65536];
    static float vals[65536];
    for (int i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    p.x[0] = all; p.y[0] = vals;
    K("o2c_cast_f16_f32")(0, 65536, &p);
    p.x[0] = vals; p.y[0] = back;
    K("o2c_cast_f32_f16")(0, 65536, &p);
    for (int i = 0; i < 65536; i++) {
        int nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        if (nan) assert_true(isnan(vals[i]) && (back[i] & 0x7c00) == 0x7c00 && (back[i] & 0x3ff));
        else assert_int_equal(back[i], i);
    }
    assert_true(vals[0x3c00] == 1.0f && vals[0x0001] == 5.9604645e-8f && isinf(vals[0xfc00]) && vals[0xfc00] < 0);

    const float g[3] = {1.0f, 1.00390625f /* tie between 1 and 1+2^-7: even */, -3.5f};
    uint16_t b[3];
    p.x[0] = g; p.y[0] = b;
    K("o2c_cast_f32_bf16")(0, 3, &p);
    assert_true(b[0] == 0x3f80 && b[1] == 0x3f80 && b[2] == 0xc060);
}

static void test_where(void **state)
{
    (void)state;
    o2c_p p;
    memset(&p, 0, sizeof p);
    /* same shapes, 4-byte elements */
    const uint8_t c[4] = {1, 0, 0, 1};
    const float a[4] = {1, 2, 3, 4}, b[4] = {-1, -2, -3, -4};
    float y[4];
    p.x[0] = c; p.x[1] = a; p.x[2] = b; p.y[0] = y;
    p.k[O2C_EW_ESIZE] = 4;
    K("o2c_where")(0, 4, &p);
    const float w[4] = {1, -2, -3, 4};
    assert_memory_equal(y, w, sizeof w);

    /* cond column (2x1), X scalar, Y 2x3; 8-byte elements */
    const uint8_t cc[2] = {0, 1};
    const int64_t xs = 7, ym[6] = {1, 2, 3, 4, 5, 6};
    int64_t out[6];
    memset(&p, 0, sizeof p);
    p.x[0] = cc; p.x[1] = &xs; p.x[2] = ym; p.y[0] = out;
    bcast(&p, 2, (int64_t[]){2, 3}, 3, (const int64_t[][8]){{1, 0}, {0, 0}, {3, 1}});
    p.k[O2C_EW_ESIZE] = 8;
    K("o2c_where")(0, 6, &p);
    const int64_t want[6] = {1, 2, 3, 7, 7, 7};
    assert_memory_equal(out, want, sizeof want);
}

static void test_copy_fill(void **state)
{
    (void)state;
    o2c_p p;
    memset(&p, 0, sizeof p);
    const char src[7] = "abcdef";
    char dst[7] = "......";
    p.x[0] = src; p.y[0] = dst;
    K("o2c_copy")(0, 6, &p);
    assert_string_equal(dst, "abcdef");
    char part[7] = "......";
    p.y[0] = part;
    K("o2c_copy")(2, 4, &p);                /* bytes 2..3 only */
    assert_string_equal(part, "..cd..");

    /* fill with a 4-byte pattern */
    const float v = 1.5f;
    float f[5];
    memset(&p, 0, sizeof p);
    p.x[0] = &v; p.y[0] = f;
    p.k[O2C_FILL_ESIZE] = 4;
    K("o2c_fill")(0, 5, &p);
    for (int i = 0; i < 5; i++) assert_true(f[i] == 1.5f);

    /* 8-byte pattern, part of the range */
    const int64_t lv = -3;
    int64_t l[4] = {0, 0, 0, 0};
    p.x[0] = &lv; p.y[0] = l;
    p.k[O2C_FILL_ESIZE] = 8;
    K("o2c_fill")(1, 3, &p);
    assert_true(l[0] == 0 && l[1] == -3 && l[2] == -3 && l[3] == 0);

    /* 1-byte (bool) */
    const uint8_t one = 1;
    uint8_t bb[3] = {0, 0, 0};
    p.x[0] = &one; p.y[0] = bb;
    p.k[O2C_FILL_ESIZE] = 1;
    K("o2c_fill")(0, 3, &p);
    assert_true(bb[0] == 1 && bb[1] == 1 && bb[2] == 1);
}

/* the lowering and folding path: a Lowering of Add with broadcasting,
 * executed like fold.c does */
static void test_lowered_add_matches(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_output(m, "y", DT_FLOAT, NULL);
    const int64_t d23[2] = {2, 3}, d3[1] = {3};
    pb_init_raw(m, "a", DT_FLOAT, 2, d23, (float[]){1, 2, 3, 4, 5, 6}, 24);
    pb_init_raw(m, "b", DT_FLOAT, 1, d3, (float[]){10, 20, 30}, 12);
    pb_node(m, "Add", "add", "a,b", "y");
    Graph *g = pb_load(m);
    static Options o;
    EXPECT_OK(infer_graph(g, &o));
    Tensor *y = graph_find(g, "y");
    assert_non_null(y->data);
    const float want[6] = {11, 22, 33, 14, 25, 36};
    assert_memory_equal(y->data, want, sizeof want);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_registry),
        T(test_matmul),
        T(test_matmul_batched),
        T(test_add_broadcast),
        T(test_unary_instances),
        T(test_cast),
        T(test_half_casts),
        T(test_where),
        T(test_copy_fill),
        T(test_lowered_add_matches),
    };
    return cmocka_run_group_tests_name("kernels", tests, NULL, NULL);
}
