/* ImageDecoder (opset 20): the encoded image's size decides the output's
 * shape, so the input must be known at compile time (a constant, or a
 * graph input bound with --bind: need_const names it). The compiler
 * decodes it (compiler/image_decode.c) in the shape rule (the shape) and in
 * the lowering (the pixels, a constant copied into the output); the
 * generated code checks at run time that a bound input holds the bound
 * bytes. pixel_format RGB, BGR (H x W x 3) or Grayscale (H x W x 1, PIL's
 * "L" luma). */
#include <string.h>

#include "../ir.h"

static int channels(Node *n, int *bgr)
{
    const char *f = attr_s(n, "pixel_format");
    *bgr = !strcmp(f, "BGR");
    if (!strcmp(f, "RGB") || *bgr) return 3;
    if (!strcmp(f, "Grayscale")) return 1;
    fail("pixel_format '%s' is not RGB, BGR or Grayscale", f);
}

static uint8_t *decode(Node *n, int64_t *dims)
{
    Tensor *x = n->in[0];
    static const int U8[] = {DT_UINT8, 0};
    need_dtype(n, x, U8);
    if (x->rank != 1) fail("the encoded stream must be a 1-D uint8 tensor, it is %s", tensor_shape_str(x));
    need_const(n, x, "the encoded image (its size decides the output shape)");
    int bgr, ch = channels(n, &bgr);
    uint8_t *px = image_decode((const uint8_t *)x->data, (size_t)x->dims[0], ch, bgr, &dims[0], &dims[1]);
    dims[2] = ch;
    return px;
}

void infer_image_decoder(Node *n)
{
    int64_t d[3];
    decode(n, d);
    set_out(n, 0, DT_UINT8, 3, d);
}

void lower_image_decoder(Node *n, Lowering *L)
{
    int64_t d[3];
    uint8_t *px = decode(n, d);
    Tensor *y = n->out[0];
    Tensor *t = lower_const(L, "image", DT_UINT8, 3, d);
    memcpy(t->data, px, (size_t)(d[0] * d[1] * d[2]));
    lower_copy(L, t, y);
}
