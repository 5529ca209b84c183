//===- ArgChecksTestSupport.h - The check tests' helpers --------*- C++ -*-===//
//
// Made-up addresses (compared, never read) and the assertion that a check
// refused with an invalid-argument error naming what it should.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_UNITTESTS_RUNTIME_ARGCHECKSTESTSUPPORT_H
#define MOSS_UNITTESTS_RUNTIME_ARGCHECKSTESTSUPPORT_H

#include "Status.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace moss::runtime::test {

inline const void *at(uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}
inline void *mutableAt(uintptr_t address) {
  return reinterpret_cast<void *>(address);
}

/// The status is MOSS_ERROR_INVALID_ARGUMENT and its message contains `part`.
inline ::testing::AssertionResult rejects(const Status &status,
                                          const std::string &part) {
  if (status.ok())
    return ::testing::AssertionFailure() << "accepted";
  if (status.code != MOSS_ERROR_INVALID_ARGUMENT)
    return ::testing::AssertionFailure() << "code " << status.code;
  if (status.message.find(part) == std::string::npos)
    return ::testing::AssertionFailure()
           << "message \"" << status.message << "\" lacks \"" << part << "\"";
  return ::testing::AssertionSuccess();
}

} // namespace moss::runtime::test

#endif // MOSS_UNITTESTS_RUNTIME_ARGCHECKSTESTSUPPORT_H
