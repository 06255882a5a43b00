/* common/base64.c against RFC 4648's test vectors, binary input, and appending. */
#include "common/base64.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

static void test_base64_rfc4648_vectors(void **state)
{
    static const char *const cases[][2] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf out = BUF_INIT;
        assert_int_equal(
            base64_encode(&out, (const unsigned char *)cases[i][0], strlen(cases[i][0])), 0);
        assert_string_equal(out.data, cases[i][1]);
        assert_int_equal(out.len, strlen(cases[i][1]));
        buf_free(&out);
    }
}

static void test_base64_binary_and_append(void **state)
{
    /* every 6-bit group value appears: the whole alphabet, '+' and '/' included */
    const unsigned char bin[] = {0x00, 0x10, 0x83, 0x10, 0x51, 0x87, 0x20, 0x92, 0x8b, 0x30,
                                 0xd3, 0x8f, 0x41, 0x14, 0x93, 0x51, 0x55, 0x97, 0x61, 0x96,
                                 0x9b, 0x71, 0xd7, 0x9f, 0x82, 0x18, 0xa3, 0x92, 0x59, 0xa7,
                                 0xa2, 0x9a, 0xab, 0xb2, 0xdb, 0xaf, 0xc3, 0x1c, 0xb3, 0xd3,
                                 0x5d, 0xb7, 0xe3, 0x9e, 0xbb, 0xf3, 0xdf, 0xbf};
    struct buf out = BUF_INIT;
    assert_int_equal(buf_append_str(&out, "data:x;base64,"), 0);
    assert_int_equal(base64_encode(&out, bin, sizeof bin), 0);
    assert_string_equal(out.data,
                        "data:x;base64,"
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    buf_free(&out);
    const unsigned char zeros[2] = {0, 0};
    assert_int_equal(base64_encode(&out, zeros, 2), 0);
    assert_string_equal(out.data, "AAA=");
    buf_free(&out);
}

/* Decoding gives back what encoding took, for every length's padding; what is not base64
 * (a wrong length, a stray character, '=' inside) is refused and leaves out unchanged. */
static void test_base64_decode(void **state)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        struct buf enc = BUF_INIT, dec = BUF_INIT;
        assert_int_equal(base64_encode(&enc, (const unsigned char *)plain[i], strlen(plain[i])), 0);
        assert_int_equal(base64_decode(&dec, enc.data ? enc.data : "", enc.len), 0);
        assert_int_equal(dec.len, strlen(plain[i]));
        assert_memory_equal(dec.data ? dec.data : "", plain[i], dec.len);
        buf_free(&enc);
        buf_free(&dec);
    }
    const unsigned char bin[] = {0, 0xff, 0x10, 0x83, 0xfe};
    struct buf enc = BUF_INIT, dec = BUF_INIT;
    assert_int_equal(base64_encode(&enc, bin, sizeof bin), 0);
    assert_int_equal(base64_decode(&dec, enc.data, enc.len), 0);
    assert_int_equal(dec.len, sizeof bin);
    assert_memory_equal(dec.data, bin, sizeof bin);
    buf_free(&enc);
    static const char *const bad[] = {"Zg=", "Z===", "Zm9v!A==", "Zg==Zg==", "=AAA"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t before = dec.len;
        assert_int_equal(base64_decode(&dec, bad[i], strlen(bad[i])), -1);
        assert_int_equal(dec.len, before);
    }
    buf_free(&dec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64_rfc4648_vectors),
        cmocka_unit_test(test_base64_binary_and_append),
        cmocka_unit_test(test_base64_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
