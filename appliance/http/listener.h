// Listener: the daemon's listening socket, bound before anything else is opened (a daemon
// that cannot serve says so before it touches its data), and the stop event that wakes its
// accept loop and every connection when the server stops. The server takes it over.
// Public header of http/: other folders include it.
// Thread safety: a value owned by one thread; moved into the Server before it runs.
#pragma once

#include <string>

#include "config/listen_address.h"
#include "kimi/status.h"

namespace kimi::http {

class Listener {
 public:
  // Creates and listens on the socket. Unavailable("cannot listen on 127.0.0.1:8080: address
  // already in use") and the like on failure.
  static Result<Listener> Bind(const config::ListenAddress& address);

  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  // "127.0.0.1:41234": the address actually bound (the kernel's port when 0 was asked).
  const std::string& bound_address() const { return bound_address_; }

  // Hands the descriptors to the caller, which closes them; the listener then holds none.
  int ReleaseSocket();
  int ReleaseStopEvent();

 private:
  Listener(int fd, int stop_fd, std::string bound_address)
      : fd_(fd), stop_fd_(stop_fd), bound_address_(std::move(bound_address)) {}

  int fd_ = -1;
  int stop_fd_ = -1;  // eventfd; readable once the server is stopped
  std::string bound_address_;
};

}  // namespace kimi::http
