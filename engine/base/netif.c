/* This host's own addresses (netif.h). */
#include "engine/base/netif.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>

/* The address as 16 bytes, IPv4 in its IPv4-mapped form; false for another family. */
static bool netif_key(const struct sockaddr *sa, unsigned char key[16])
{
    if (sa->sa_family == AF_INET) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        memcpy(key, mapped, 12);
        memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

bool netif_addr_is_host(const struct sockaddr *sa)
{
    unsigned char want[16], have[16];
    struct ifaddrs *list = NULL;
    if (!netif_key(sa, want) || getifaddrs(&list) < 0)
        return false;
    bool found = false;
    for (struct ifaddrs *i = list; i && !found; i = i->ifa_next)
        found = i->ifa_addr && netif_key(i->ifa_addr, have) && memcmp(want, have, 16) == 0;
    freeifaddrs(list);
    return found;
}
