#include "http/listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

namespace kimi::http {
namespace {

constexpr int kListenBacklog = 1024;

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<int> BindSocket(const config::ListenAddress& a) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (a.ipv6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(a.port));
    if (inet_pton(AF_INET6, a.host.c_str(), &in6->sin6_addr) != 1) {
      return Status::InvalidArgument("not an IPv6 address: " + a.host);
    }
    len = sizeof(sockaddr_in6);
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&addr);
    in4->sin_family = AF_INET;
    in4->sin_port = htons(static_cast<uint16_t>(a.port));
    if (inet_pton(AF_INET, a.host.c_str(), &in4->sin_addr) != 1) {
      return Status::InvalidArgument("not an IPv4 address: " + a.host);
    }
    len = sizeof(sockaddr_in);
  }
  int fd = ::socket(a.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError("cannot create a socket: " + Lowercase(std::strerror(errno)));
  int one = 1;
  // SO_REUSEADDR lets a restarted daemon bind while old connections sit in TIME_WAIT; on
  // Linux it does not let two listeners share a port, so "in use" is still detected.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (a.ipv6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int err = errno;
    ::close(fd);
    std::string why = err == EADDRINUSE ? "address already in use (another process is listening there)"
                      : err == EACCES   ? "permission denied (ports below 1024 need CAP_NET_BIND_SERVICE)"
                      : err == EADDRNOTAVAIL ? "address not available on this machine"
                                             : Lowercase(std::strerror(err));
    return Status::Unavailable("cannot listen on " + a.ToString() + ": " + why);
  }
  if (::listen(fd, kListenBacklog) != 0) {
    int err = errno;
    ::close(fd);
    return Status::Unavailable("cannot listen on " + a.ToString() + ": " + Lowercase(std::strerror(err)));
  }
  return fd;
}

}  // namespace

Result<Listener> Listener::Bind(const config::ListenAddress& address) {
  int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0) return Status::IOError(std::string("eventfd: ") + std::strerror(errno));
  Result<int> fd = BindSocket(address);
  if (!fd.ok()) {
    ::close(stop_fd);
    return fd.status();
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  ::getsockname(*fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  config::ListenAddress actual = address;
  actual.port = ntohs(address.ipv6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                   : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return Listener(*fd, stop_fd, actual.ToString());
}

Listener::Listener(Listener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      stop_fd_(std::exchange(other.stop_fd_, -1)),
      bound_address_(std::move(other.bound_address_)) {}

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    fd_ = std::exchange(other.fd_, -1);
    stop_fd_ = std::exchange(other.stop_fd_, -1);
    bound_address_ = std::move(other.bound_address_);
  }
  return *this;
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

int Listener::ReleaseSocket() {
  return std::exchange(fd_, -1);
}
int Listener::ReleaseStopEvent() {
  return std::exchange(stop_fd_, -1);
}

}  // namespace kimi::http
