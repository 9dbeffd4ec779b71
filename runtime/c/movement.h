/* Data movement kernels: they move bytes and do not care about the element
 * type beyond its size. Index space: see each kernel. */

/*@ o2c_copy */
/* o2c_copy: y = x, byte by byte. Index space: bytes. */
O2C_KERNEL(o2c_copy)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    unsigned char *Y = (unsigned char *)p->y[0];
    O2C_FOR(i) Y[i] = X[i];
}

/*@ o2c_fill */
/* o2c_fill: y[i] = the k[0]-byte pattern in k[1] (little-endian value
 * bytes copied from the constant). Index space: elements. */
O2C_KERNEL(o2c_fill)
{
    unsigned char *Y = (unsigned char *)p->y[0];
    const int64_t es = p->k[0];
    const unsigned char *v = (const unsigned char *)p->x[0];
    O2C_FOR(i) memcpy(Y + i * es, v, (size_t)es);
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_MOVEMENT(K) K(o2c_copy) K(o2c_fill)
