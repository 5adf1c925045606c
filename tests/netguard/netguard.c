/* The test suite's network guard: preloaded (LD_PRELOAD) into every process that `make test`
 * starts, it ends any process that tries to reach an address off this machine.
 *
 * Tests may reach loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104), local sockets and anything
 * inside a network namespace that has no interface but `lo` (a namespace a test made: nothing
 * there leads off the machine). Anything else -- a connect, sendto, sendmsg or sendmmsg to another
 * address, or a name lookup that would ask a DNS server -- prints what was tried and exits the
 * process with status 86 before a packet is sent, so the test that caused it fails loudly.
 *
 * glibc's resolver calls its internal socket functions, which a preload cannot see; the guard
 * therefore also checks getaddrinfo and gethostbyname*: numeric addresses and the names
 * /etc/hosts gives for loopback pass, every other name is refused the same way.
 *
 * Thread-safe: it keeps no state but a cached answer to "is this namespace private", which
 * cannot change for a process that does not call setns/unshare itself (tests that make a
 * namespace do it in a child process). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

enum { kViolationExit = 86 };

/* 1 when /proc/self/net/dev lists no interface but lo; 0 otherwise or when unreadable. */
static int only_loopback_interface(void) {
  FILE* f = fopen("/proc/self/net/dev", "re");
  if (f == NULL) return 0;
  char line[512];
  int interfaces = 0, others = 0;
  for (int n = 0; fgets(line, sizeof line, f) != NULL; ++n) {
    if (n < 2) continue; /* two header lines */
    char* colon = strchr(line, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    const char* name = line;
    while (*name == ' ') ++name;
    ++interfaces;
    if (strcmp(name, "lo") != 0) ++others;
  }
  fclose(f);
  return interfaces > 0 && others == 0;
}

static int private_namespace(void) {
  static volatile int cached = -1; /* racing first calls compute the same answer */
  if (cached < 0) cached = only_loopback_interface();
  return cached;
}

static int loopback_or_local(const struct sockaddr* address, socklen_t length) {
  if (address == NULL || length < (socklen_t)sizeof(sa_family_t)) return 1;
  if (address->sa_family == AF_INET && length >= (socklen_t)sizeof(struct sockaddr_in)) {
    const struct sockaddr_in* in = (const struct sockaddr_in*)address;
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (address->sa_family == AF_INET6 && length >= (socklen_t)sizeof(struct sockaddr_in6)) {
    const struct in6_addr* a = &((const struct sockaddr_in6*)address)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a)) return 1;
    return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
  }
  if (address->sa_family == AF_INET || address->sa_family == AF_INET6) return 0;
  return 1; /* AF_UNIX, AF_NETLINK, ...: nothing leaves the machine */
}

static void describe(const struct sockaddr* address, char* out, size_t size) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (address->sa_family == AF_INET) {
    const struct sockaddr_in* in = (const struct sockaddr_in*)address;
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (address->sa_family == AF_INET6) {
    const struct sockaddr_in6* in6 = (const struct sockaddr_in6*)address;
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  snprintf(out, size, "%s port %u", host, port);
}

static void refuse(const char* call, const char* what) {
  char program[256] = "?";
  ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
  if (n > 0) program[n] = '\0';
  dprintf(2,
          "netguard: %s (pid %d) called %s for %s, which is off this machine; tests may reach only "
          "loopback, or other addresses inside a network namespace they made (tests/netguard)\n",
          program, (int)getpid(), call, what);
  _exit(kViolationExit);
}

static void check_address(const char* call, const struct sockaddr* address, socklen_t length) {
  if (loopback_or_local(address, length) || private_namespace()) return;
  char what[INET6_ADDRSTRLEN + 16];
  describe(address, what, sizeof what);
  refuse(call, what);
}

/* Names that resolve without asking a DNS server to somewhere on this machine. */
static int local_name(const char* name) {
  if (name == NULL || *name == '\0') return 1;
  struct in6_addr scratch;
  if (inet_pton(AF_INET, name, &scratch) == 1 || inet_pton(AF_INET6, name, &scratch) == 1) return 1;
  static const char* const kLocal[] = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"};
  for (size_t i = 0; i < sizeof kLocal / sizeof kLocal[0]; ++i) {
    if (strcasecmp(name, kLocal[i]) == 0) return 1;
  }
  size_t length = strlen(name);
  return length > 10 && strcasecmp(name + length - 10, ".localhost") == 0;
}

static void check_name(const char* call, const char* name) {
  if (local_name(name) || private_namespace()) return;
  char what[300];
  snprintf(what, sizeof what, "the name \"%.256s\" (a DNS query)", name);
  refuse(call, what);
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

int connect(int fd, const struct sockaddr* address, socklen_t length) {
  check_address("connect", address, length);
  return REAL(connect)(fd, address, length);
}

ssize_t sendto(int fd, const void* data, size_t size, int flags, const struct sockaddr* address, socklen_t length) {
  if (address != NULL) check_address("sendto", address, length);
  return REAL(sendto)(fd, data, size, flags, address, length);
}

ssize_t sendmsg(int fd, const struct msghdr* message, int flags) {
  if (message != NULL && message->msg_name != NULL) {
    check_address("sendmsg", (const struct sockaddr*)message->msg_name, message->msg_namelen);
  }
  return REAL(sendmsg)(fd, message, flags);
}

int sendmmsg(int fd, struct mmsghdr* messages, unsigned int count, int flags) {
  for (unsigned int i = 0; messages != NULL && i < count; ++i) {
    const struct msghdr* m = &messages[i].msg_hdr;
    if (m->msg_name != NULL) check_address("sendmmsg", (const struct sockaddr*)m->msg_name, m->msg_namelen);
  }
  return REAL(sendmmsg)(fd, messages, count, flags);
}

int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints, struct addrinfo** result) {
  check_name("getaddrinfo", node);
  return REAL(getaddrinfo)(node, service, hints, result);
}

struct hostent* gethostbyname(const char* name) {
  check_name("gethostbyname", name);
  return REAL(gethostbyname)(name);
}

struct hostent* gethostbyname2(const char* name, int family) {
  check_name("gethostbyname2", name);
  return REAL(gethostbyname2)(name, family);
}

int gethostbyname_r(const char* name, struct hostent* entry, char* buffer, size_t size, struct hostent** result,
                    int* error) {
  check_name("gethostbyname_r", name);
  return REAL(gethostbyname_r)(name, entry, buffer, size, result, error);
}
