/* Unit tests of sha256_hex and sha256_file (compiler/core/sha256.c), the
 * model's fingerprint in the generated files: the digests FIPS 180-4's
 * examples and `sha256sum` give, every padding length around a block's end
 * (55, 56, 63, 64 bytes), and a file read in pieces against the same bytes
 * hashed whole. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "o2c_test.h"

static void test_known_digests(void **state)
{
    (void)state;
    char h[65];
    static const struct { const char *in, *hex; } V[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",   /* 56 bytes: the length in a second block */
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        sha256_hex((const unsigned char *)V[i].in, strlen(V[i].in), h);
        assert_string_equal(h, V[i].hex);
    }
    unsigned char *a = malloc(1000000);   /* a million 'a' (FIPS 180-4's third example) */
    memset(a, 'a', 1000000);
    sha256_hex(a, 1000000, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* 0..200 bytes, each hashed whole and from a file (sha256_file reads in
 * 64 KiB pieces; these lengths cross every padding case) */
static void test_file_equals_bytes(void **state)
{
    (void)state;
    char path[] = "/tmp/o2c_sha_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    unsigned char buf[200];
    for (int n = 0; n <= 200; n++) {
        for (int i = 0; i < n; i++) buf[i] = (unsigned char)(i * 7 + n);
        assert_int_equal(fseek(f, 0, SEEK_SET), 0);
        assert_int_equal(fwrite(buf, 1, (size_t)n, f), (size_t)n);
        fflush(f);
        assert_int_equal(ftruncate(fd, n), 0);
        char a[65], b[65];
        sha256_hex(buf, (size_t)n, a);
        assert_true(sha256_file(path, b));
        assert_string_equal(a, b);
    }
    fclose(f);
    remove(path);
    char h[65];
    assert_false(sha256_file("/nonexistent/o2c_sha", h));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_digests),
        cmocka_unit_test(test_file_equals_bytes),
    };
    return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
