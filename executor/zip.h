/* The zip format's records (PKWARE APPNOTE 6.3.x), shared by zip_read.c and zip_write.c:
 * signatures, fixed sizes, and little-endian field access. */
#ifndef PADDOCK_EXECUTOR_ZIP_H
#define PADDOCK_EXECUTOR_ZIP_H

#include <stdint.h>

#define ZIP_SIG_LOCAL 0x04034b50u         /* local file header, 30 bytes + name + extra */
#define ZIP_SIG_DESCRIPTOR 0x08074b50u    /* data descriptor */
#define ZIP_SIG_CENTRAL 0x02014b50u       /* central directory header, 46 bytes + ... */
#define ZIP_SIG_END 0x06054b50u           /* end of central directory record, 22 bytes + comment */
#define ZIP_SIG_END64 0x06064b50u         /* Zip64 end of central directory record, 56 bytes */
#define ZIP_SIG_END64_LOCATOR 0x07064b50u /* Zip64 end of central directory locator, 20 bytes */
#define ZIP_EXTRA_ZIP64 0x0001u

#define ZIP_LOCAL_SIZE 30
#define ZIP_CENTRAL_SIZE 46
#define ZIP_END_SIZE 22
#define ZIP_END64_SIZE 56
#define ZIP_END64_LOCATOR_SIZE 20

#define ZIP_FLAG_ENCRYPTED 0x0001u
#define ZIP_FLAG_DESCRIPTOR 0x0008u
#define ZIP_FLAG_UTF8 0x0800u
#define ZIP_METHOD_STORED 0
#define ZIP_METHOD_DEFLATE 8
#define ZIP_HOST_UNIX 3 /* high byte of "version made by" */

static inline uint16_t zip_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t zip_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t zip_get64(const unsigned char *p)
{
    return (uint64_t)zip_get32(p) | (uint64_t)zip_get32(p + 4) << 32;
}

static inline unsigned char *zip_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    return p + 2;
}

static inline unsigned char *zip_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return p + 4;
}

static inline unsigned char *zip_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return p + 8;
}

#endif
