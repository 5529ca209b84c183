//===- Status.h - Status code plus message, the runtime's error value -*- C++
//-*-//

#ifndef MOSS_RUNTIME_STATUS_H
#define MOSS_RUNTIME_STATUS_H

#include "moss/Runtime/moss_runtime.h"

#include <string>
#include <utility>

namespace moss::runtime {

struct Status {
  moss_status_t code = MOSS_OK;
  std::string message;

  bool ok() const { return code == MOSS_OK; }
};

inline Status success() { return Status{}; }

inline Status failure(moss_status_t code, std::string message) {
  return Status{code, std::move(message)};
}

inline Status invalidArgument(std::string message) {
  return failure(MOSS_ERROR_INVALID_ARGUMENT, std::move(message));
}

} // namespace moss::runtime

#endif // MOSS_RUNTIME_STATUS_H
