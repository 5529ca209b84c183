//===- FileUtil.cpp - Whole-file reads and atomic writes ------------------===//

#include "moss/Config/FileUtil.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace moss::config {

namespace {

std::string osError(const std::string &path, const char *what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

bool writeAll(int fd, std::string_view bytes) {
  const char *data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t wrote = ::write(fd, data, left);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return false;
    data += wrote;
    left -= size_t(wrote);
  }
  return true;
}

std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

bool forEachChunk(const std::string &path,
                  const std::function<void(std::string_view)> &onChunk,
                  bool regularOnly, std::string &err) {
  int fd = ::open(path.c_str(),
                  O_RDONLY | O_CLOEXEC | (regularOnly ? O_NOFOLLOW : 0));
  if (fd < 0 && regularOnly && errno == ELOOP) {
    err = path + ": is a symbolic link, expected a regular file (it may point "
                 "outside its folder)";
    return false;
  }
  if (fd < 0) {
    err = osError(path, "cannot open for reading");
    return false;
  }
  auto fail = [&](std::string message) {
    err = std::move(message);
    ::close(fd);
    return false;
  };
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return fail(osError(path, "cannot stat"));
  if (S_ISDIR(info.st_mode))
    return fail(path + ": is a directory, expected a file");
  if (regularOnly && !S_ISREG(info.st_mode))
    return fail(path + ": is not a regular file");
  char chunk[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fail(osError(path, "read failed"));
    if (got == 0)
      break;
    onChunk(std::string_view(chunk, size_t(got)));
  }
  ::close(fd);
  return true;
}

bool readInto(const std::string &path, bool regularOnly, std::string &bytes,
              std::string &err) {
  std::string result;
  if (!forEachChunk(
          path, [&](std::string_view chunk) { result.append(chunk); },
          regularOnly, err))
    return false;
  bytes = std::move(result);
  return true;
}
} // namespace

bool forEachFileChunk(const std::string &path,
                      const std::function<void(std::string_view)> &onChunk,
                      std::string &err) {
  return forEachChunk(path, onChunk, /*regularOnly=*/false, err);
}

bool readFile(const std::string &path, std::string &bytes, std::string &err) {
  return readInto(path, /*regularOnly=*/false, bytes, err);
}

bool readRegularFile(const std::string &path, std::string &bytes,
                     std::string &err) {
  return readInto(path, /*regularOnly=*/true, bytes, err);
}

bool writeFileAtomic(const std::string &path, std::string_view bytes,
                     std::string &err) {
  std::string tempPath = path + ".tmp." + std::to_string(::getpid());
  int fd =
      ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    err = osError(tempPath, "cannot create temporary file");
    return false;
  }
  auto failAndCleanUp = [&](const char *what) {
    err = osError(tempPath, what);
    ::close(fd);
    ::unlink(tempPath.c_str());
    return false;
  };
  if (!writeAll(fd, bytes))
    return failAndCleanUp("write failed");
  if (::fsync(fd) != 0)
    return failAndCleanUp("fsync failed");
  if (::close(fd) != 0) {
    err = osError(tempPath, "close failed");
    ::unlink(tempPath.c_str());
    return false;
  }
  if (::rename(tempPath.c_str(), path.c_str()) != 0) {
    err = tempPath + ": cannot rename to " + path + ": " + std::strerror(errno);
    ::unlink(tempPath.c_str());
    return false;
  }
  // Make the rename itself durable; best effort, the file is already in place.
  int dirFd =
      ::open(parentDirectory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return true;
}

} // namespace moss::config
