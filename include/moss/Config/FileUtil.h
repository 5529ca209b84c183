//===- FileUtil.h - Whole-file reads and atomic writes ---------*- C++ -*-===//
//
// Generated files (manifest, cubins, PTX) are written atomically so that a
// crashed or concurrent build never leaves a half-written file under the final
// name: bytes go to "<path>.tmp.<pid>", are fsync'ed, then renamed over.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_FILEUTIL_H
#define MOSS_CONFIG_FILEUTIL_H

#include <functional>
#include <string>
#include <string_view>

namespace moss::config {

/// Reads the file's exact bytes. On failure returns false and sets `err`
/// ("<path>: <what went wrong>").
bool readFile(const std::string &path, std::string &bytes, std::string &err);

/// readFile for a file a manifest names: refuses a symbolic link (which may
/// point outside the kernels folder) and anything but a regular file.
bool readRegularFile(const std::string &path, std::string &bytes,
                     std::string &err);

/// Passes the file's bytes to `onChunk` in order, in pieces of at most 64
/// KiB, without holding the whole file (sha256File). Fails, as readFile does,
/// on a path that cannot be opened, stat'ed or read, or is a directory;
/// `onChunk` may then have seen part of the file.
bool forEachFileChunk(const std::string &path,
                      const std::function<void(std::string_view)> &onChunk,
                      std::string &err);

/// Writes `bytes` to "<path>.tmp.<pid>", fsyncs it, renames it to `path` and
/// fsyncs the directory. The temporary file is removed on failure.
bool writeFileAtomic(const std::string &path, std::string_view bytes,
                     std::string &err);

} // namespace moss::config

#endif // MOSS_CONFIG_FILEUTIL_H
