//===- ConfigFuzzTargets.h - Fuzz targets of MossConfig --------*- C++ -*-===//
//
// Each target feeds arbitrary bytes to one of MossConfig's readers (or its
// launch rules) and checks what must hold for any input, aborting with a
// message when it does not: no crash or undefined behaviour, an error that
// names the file, and for accepted input a serialize/parse round trip that is
// a fixed point. libFuzzer drives them (MOSS_BUILD_FUZZERS, clang); the
// replay tool runs them over the checked-in corpus under ctest with any
// compiler.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_FUZZ_CONFIGFUZZTARGETS_H
#define MOSS_FUZZ_CONFIGFUZZTARGETS_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace moss::fuzz {

using FuzzTarget = void (*)(const uint8_t *data, size_t size);

/// Whitelist::parse: accepted entries are legal, findable and re-parse.
void fuzzWhitelist(const uint8_t *data, size_t size);
/// parseManifest: serialize(parse(x)) parses back to the same bytes.
void fuzzManifest(const uint8_t *data, size_t size);
/// parseCandidateList: as the manifest.
void fuzzCandidateList(const uint8_t *data, size_t size);
/// parseKeyList and enumerateCandidateTiles: every enumerated tile is legal.
void fuzzKeyList(const uint8_t *data, size_t size);
/// deriveGemmLaunch and deriveAttentionLaunch on arbitrary 64-bit sizes:
/// either an error or a launch within CUDA's limits.
void fuzzLaunchRules(const uint8_t *data, size_t size);

/// The runtime's argument checks (runtime/src/ArgChecks.h) against an
/// oracle in 128-bit arithmetic: accepted exactly when valid.
void fuzzArgChecks(const uint8_t *data, size_t size);

/// The target of a name ("whitelist", "manifest", "candidates", "keys",
/// "launch", "args"), or nullptr.
FuzzTarget fuzzTargetNamed(std::string_view name);

} // namespace moss::fuzz

#endif // MOSS_FUZZ_CONFIGFUZZTARGETS_H
