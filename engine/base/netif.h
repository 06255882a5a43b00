/* This host's own addresses: what its interfaces carry. A public address of the host is
 * still the host (its services bound to all interfaces, behind a firewall that only sees
 * traffic from elsewhere), so egress treats it as it treats loopback. */
#ifndef PADDOCK_NETIF_H
#define PADDOCK_NETIF_H

#include <stdbool.h>
#include <sys/socket.h>

/* Whether the AF_INET or AF_INET6 address sa is assigned to one of this host's interfaces
 * (an IPv4-mapped IPv6 address as its IPv4 one). false when the interfaces cannot be read. */
bool netif_addr_is_host(const struct sockaddr *sa);

#endif
