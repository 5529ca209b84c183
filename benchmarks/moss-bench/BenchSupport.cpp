//===- BenchSupport.cpp - Data, reference and timing for moss-bench -------===//

#include "BenchSupport.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace moss::bench {

bool parseSizeList(const std::string &text, int64_t maxValue,
                   std::vector<int64_t> &out) {
  out.clear();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || errno == ERANGE || v < 1 || v > maxValue)
      return false;
    out.push_back(v);
  }
  return !out.empty();
}

bool parseCount(const std::string &text, int64_t maxValue, int &out) {
  std::vector<int64_t> values;
  if (text.find(',') != std::string::npos ||
      !parseSizeList(text, maxValue, values))
    return false;
  out = static_cast<int>(values.front());
  return true;
}

moss_status_t createRuntimeWithEnv(const std::string &kernelsDir,
                                   const std::string &whitelist,
                                   const char *name, const char *value,
                                   moss_runtime_t *out) {
  const char *old = std::getenv(name);
  std::string saved = old ? old : "";
  setenv(name, value, 1);
  moss_status_t status =
      moss_runtime_create(kernelsDir.c_str(), whitelist.c_str(), out);
  if (old)
    setenv(name, saved.c_str(), 1);
  else
    unsetenv(name);
  return status;
}

std::vector<double> referenceOutput(const std::vector<uint16_t> &x,
                                    const std::vector<uint16_t> &w,
                                    const std::vector<uint16_t> &scale,
                                    const std::vector<uint16_t> &residual,
                                    int64_t m, int64_t n, int64_t k, int mode) {
  std::vector<double> xd(x.size()), wd(w.size()), out(m * n);
  for (size_t i = 0; i < x.size(); ++i)
    xd[i] = fromBf16(x[i]);
  for (size_t i = 0; i < w.size(); ++i)
    wd[i] = fromBf16(w[i]);
  auto round = [](double v) { return fromBf16(toBf16(v)); };
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t col = t; col < n; col += threads) {
        for (int64_t row = 0; row < m; ++row) {
          double s0 = 0, s1 = 0;
          int64_t i = 0;
          for (; i + 2 <= k; i += 2) {
            s0 += xd[row * k + i] * wd[col * k + i];
            s1 += xd[row * k + i + 1] * wd[col * k + i + 1];
          }
          for (; i < k; ++i)
            s0 += xd[row * k + i] * wd[col * k + i];
          double v = round(s0 + s1);
          if (mode == 1)
            v = round(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
          else if (mode == 2)
            v = round(round(v * fromBf16(scale[col])) +
                      fromBf16(residual[row * n + col]));
          out[row * n + col] = v;
        }
      }
    });
  }
  for (std::thread &t : pool)
    t.join();
  return out;
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += ch;
    else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
      out += buf;
    } else
      out += ch;
  }
  return out + "\"";
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (cudaMalloc(&pointer, std::max<size_t>(bytes, 16)) != cudaSuccess)
    pointer = nullptr;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer)
    cudaFree(pointer);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : pointer(other.pointer) {
  other.pointer = nullptr;
}

double timePerCallUs(cudaStream_t stream, const TimingProtocol &protocol,
                     int graphs, const EnqueueFn &enqueue, std::string &err) {
  for (int i = 0; i < protocol.warmups; ++i)
    if (!enqueue(0, i % protocol.callsPerGraph, stream))
      return -1;
  std::vector<cudaGraphExec_t> execs;
  auto cleanup = [&] {
    for (cudaGraphExec_t exec : execs)
      cudaGraphExecDestroy(exec);
  };
  for (int g = 0; g < graphs; ++g) {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) !=
        cudaSuccess) {
      err = "cudaStreamBeginCapture failed";
      cleanup();
      return -1;
    }
    bool ok = true;
    for (int c = 0; c < protocol.callsPerGraph && ok; ++c)
      ok = enqueue(g, c, stream);
    cudaGraph_t graph = nullptr;
    cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    cudaGraphExec_t exec = nullptr;
    if (ok && ended == cudaSuccess)
      ended = cudaGraphInstantiate(&exec, graph, 0);
    if (graph)
      cudaGraphDestroy(graph);
    if (!ok || ended != cudaSuccess) {
      if (err.empty())
        err = std::string("capturing a graph: ") + cudaGetErrorName(ended);
      cleanup();
      return -1;
    }
    execs.push_back(exec);
    cudaGraphLaunch(exec, stream); // Uploads the graph; not timed.
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> samples;
  for (int s = 0; s < protocol.samples; ++s) {
    cudaEventRecord(start, stream);
    for (int r = 0; r < protocol.replays; ++r)
      cudaGraphLaunch(execs[r % execs.size()], stream);
    cudaEventRecord(stop, stream);
    cudaError_t synced = cudaEventSynchronize(stop);
    if (synced != cudaSuccess) {
      err = std::string("timing: ") + cudaGetErrorName(synced);
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    samples.push_back(1000.0 * ms /
                      (protocol.replays * protocol.callsPerGraph));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cleanup();
  if (samples.size() != static_cast<size_t>(protocol.samples))
    return -1;
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

} // namespace moss::bench
