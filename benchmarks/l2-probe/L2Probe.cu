//===- L2Probe.cu - How fast a grid streams a weight from L2 or HBM -------===//
//
// moss-l2-probe: a grid of C CTAs reads a buffer of a decoder weight's size
// once per call, each CTA a contiguous slice, the way the generated GEMMs
// read W (16-byte cp.async.cg into shared memory, all of a slice in flight;
// or 16-byte ld.global.cg into registers). Timed in the project's protocol
// (3 warm-ups, 8 calls a CUDA graph, 20 replays a sample, median of 5),
// hot (one buffer, L2-resident after the warm-ups) and cold (>= 24 copies
// rotated, more than the L2 holds), beside an empty kernel. It answers what
// the GEMM targets need to know: the floor of reading W from L2 and from HBM,
// and whether a grid on 80 of the SMs reads slower than one on all of them.
// First, the floor of a dependent chain: kernels that only wait for the one
// before and write, launched plainly and as programmatic dependents.
// Benchmark code, not a moss kernel.
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"
#include "moss/Config/FileUtil.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using moss::bench::TimingProtocol;

/// Slice of CTA `cta` in 16-byte vectors: [begin, end).
__device__ void sliceOf(long long vectors, long long &begin, long long &end) {
  long long per = (vectors + gridDim.x - 1) / gridDim.x;
  begin = min(vectors, per * blockIdx.x);
  end = min(vectors, begin + per);
}

/// Registers: 8 independent 16-byte loads in flight per thread and trip.
__global__ void readByLoads(const int4 *data, long long vectors, int4 *sink) {
  long long begin, end;
  sliceOf(vectors, begin, end);
  int4 acc = make_int4(0, 0, 0, 0);
  const long long step = 8LL * blockDim.x;
  for (long long i = begin + threadIdx.x; i < end; i += step) {
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      long long j = i + u * (long long)blockDim.x;
      if (j < end) {
        int4 v = __ldcg(data + j);
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
      }
    }
  }
  // Never true for the data written below; keeps the loads.
  if (acc.x == 0x7eadbeef && acc.y == 0x5eedface)
    sink[blockIdx.x] = acc;
}

/// Shared memory: the slice by cp.async.cg, in rounds of the dynamic shared
/// buffer (the whole slice in flight when it fits, as in the GEMMs).
__global__ void readByCpAsync(const int4 *data, long long vectors,
                              int bufferVectors, int4 *sink) {
  extern __shared__ int4 buffer[];
  long long begin, end;
  sliceOf(vectors, begin, end);
  for (long long round = begin; round < end; round += bufferVectors) {
    long long stop = min(end, round + bufferVectors);
    for (long long i = round + threadIdx.x; i < stop; i += blockDim.x) {
      unsigned dst = (unsigned)__cvta_generic_to_shared(buffer + (i - round));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst),
                   "l"(data + i)
                   : "memory");
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::
                     : "memory");
    __syncthreads();
  }
  if (threadIdx.x == 0 && buffer[0].x == 0x7eadbeef &&
      buffer[0].y == 0x5eedface)
    sink[blockIdx.x] = buffer[0];
}

__global__ void emptyKernel() {}

/// The least a kernel of a dependent chain does, as the generated kernels
/// do it: trigger its dependents at the start, wait for the kernel before
/// (griddepcontrol; without a programmatic launch both do nothing), then
/// write. A chain of these launched as programmatic dependents is the floor
/// of any kernel that must see the previous kernel's writes.
__global__ void waitThenStore(int *sink) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x == 0)
    sink[blockIdx.x] = int(blockIdx.x);
}

cudaError_t launchWaitThenStore(int ctas, bool programmatic, int *sink,
                                cudaStream_t stream) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(ctas));
  config.blockDim = dim3(128);
  config.stream = stream;
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = programmatic ? &overlap : nullptr;
  config.numAttrs = programmatic ? 1 : 0;
  return cudaLaunchKernelEx(&config, waitThenStore, sink);
}

struct Options {
  std::vector<int64_t> bytes = {3072LL * 768 * 2, 5120LL * 1280 * 2};
  std::vector<int64_t> ctas = {16, 32, 48, 64, 80, 96, 132, 264};
  int threads = 256;
  std::string jsonPath;
  TimingProtocol protocol;
};

bool parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = value != nullptr;
    if (arg == "--bytes" && ok)
      ok = moss::bench::parseSizeList(argv[++i], int64_t(1) << 34, o.bytes);
    else if (arg == "--ctas" && ok)
      ok = moss::bench::parseSizeList(argv[++i], 65535 * 32, o.ctas);
    else if (arg == "--threads" && ok)
      o.threads = std::atoi(argv[++i]);
    else if (arg == "--json" && ok)
      o.jsonPath = argv[++i];
    else
      ok = false;
    if (!ok || o.threads < 32 || o.threads > 1024 || o.threads % 32) {
      std::fprintf(stderr,
                   "usage: moss-l2-probe [--bytes B,...] [--ctas C,...] "
                   "[--threads 32..1024] [--json PATH]\n"
                   "  bad or missing value for %s\n",
                   arg.c_str());
      return false;
    }
  }
  return true;
}

struct Row {
  long long bytes, ctas;
  const char *mode;
  double hotUs, coldUs;
};

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o))
    return 2;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "moss-l2-probe: no CUDA device\n");
    return 1;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::string err;
  // cp.async: a slice's bytes of shared memory, at most 200 KB (then in
  // rounds), so small slices leave room for several CTAs an SM.
  const long long maxBuffer =
      std::min<long long>(prop.sharedMemPerBlockOptin, 200 * 1024) / 16 * 16;
  cudaFuncSetAttribute(readByCpAsync,
                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                       int(maxBuffer));
  long long maxCtas = *std::max_element(o.ctas.begin(), o.ctas.end());
  moss::bench::DeviceBuffer sink(size_t(16 * maxCtas));

  double emptyUs = moss::bench::timePerCallUs(
      stream, o.protocol, 1,
      [&](int, int, cudaStream_t s) {
        emptyKernel<<<1, 32, 0, s>>>();
        return cudaGetLastError() == cudaSuccess;
      },
      err);
  std::printf("%s, %d SMs, L2 %d MB; empty kernel %.2f us per call\n",
              prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              emptyUs);
  // The chain floor: plain and programmatic launches of waitThenStore.
  std::vector<Row> rows;
  moss::bench::DeviceBuffer chainSink(size_t(4 * maxCtas));
  auto chainUs = [&](int64_t ctas, bool programmatic) {
    return moss::bench::timePerCallUs(
        stream, o.protocol, 1,
        [&](int, int, cudaStream_t s) {
          return launchWaitThenStore(int(ctas), programmatic,
                                     static_cast<int *>(chainSink.get()),
                                     s) == cudaSuccess;
        },
        err);
  };
  for (int64_t ctas : o.ctas) {
    double plainUs = chainUs(ctas, false), programmaticUs = chainUs(ctas, true);
    rows.push_back({0, ctas, "chain", plainUs, -1});
    rows.push_back({0, ctas, "chain-pdl", programmaticUs, -1});
    std::printf("wait-then-store chain, %4lld CTAs: plain %.2f us, "
                "programmatic %.2f us per call\n",
                (long long)ctas, plainUs, programmaticUs);
  }
  std::printf("%10s %5s %-9s | %8s %8s | %8s %8s\n", "bytes", "CTAs", "mode",
              "hot us", "TB/s", "cold us", "TB/s");

  for (int64_t bytes : o.bytes) {
    const long long vectors = bytes / 16;
    // Cold: enough copies that the rotation overflows the L2 twice.
    const long long copies =
        std::max<long long>(24, 2 * prop.l2CacheSize / bytes + 1);
    moss::bench::DeviceBuffer data(size_t(vectors * 16 * copies));
    if (!data.ok()) {
      std::fprintf(stderr, "moss-l2-probe: out of device memory\n");
      return 1;
    }
    cudaMemset(data.get(), 0x5a, size_t(vectors * 16 * copies));
    const int4 *base = static_cast<const int4 *>(data.get());
    auto copyAt = [&](int graph, int call, bool cold) {
      long long index =
          cold ? (graph * o.protocol.callsPerGraph + call) % copies : 0;
      return base + index * vectors;
    };
    for (int64_t ctas : o.ctas) {
      const long long slice = (vectors + ctas - 1) / ctas * 16;
      const int buffer = int(std::min(maxBuffer, std::max(slice, 16LL)));
      for (const char *mode : {"cp.async", "ld.cg"}) {
        double us[2];
        for (int cold = 0; cold < 2; ++cold) {
          // Cold: graphs enough that consecutive calls never reuse a copy.
          int graphs = cold ? int((copies + o.protocol.callsPerGraph - 1) /
                                  o.protocol.callsPerGraph)
                            : 1;
          us[cold] = moss::bench::timePerCallUs(
              stream, o.protocol, graphs,
              [&](int graph, int call, cudaStream_t s) {
                const int4 *src = copyAt(graph, call, cold);
                int4 *out = static_cast<int4 *>(sink.get());
                if (mode[0] == 'c')
                  readByCpAsync<<<unsigned(ctas), o.threads, buffer, s>>>(
                      src, vectors, buffer / 16, out);
                else
                  readByLoads<<<unsigned(ctas), o.threads, 0, s>>>(src, vectors,
                                                                   out);
                return cudaGetLastError() == cudaSuccess;
              },
              err);
        }
        auto rate = [&](double t) {
          return t > emptyUs ? double(bytes) / ((t - emptyUs) * 1e6) : 0.0;
        };
        std::printf("%10lld %5lld %-9s | %8.2f %8.2f | %8.2f %8.2f\n",
                    (long long)bytes, ctas, mode, us[0], rate(us[0]), us[1],
                    rate(us[1]));
        std::fflush(stdout);
        rows.push_back({bytes, ctas, mode, us[0], us[1]});
      }
    }
  }
  std::printf("us per call (median of %d samples of %d graph replays x %d "
              "calls); TB/s: bytes / (time - empty kernel)\n",
              o.protocol.samples, o.protocol.replays, o.protocol.callsPerGraph);
  if (!err.empty())
    std::fprintf(stderr, "moss-l2-probe: %s\n", err.c_str());

  if (!o.jsonPath.empty()) {
    auto number = [](double us) {
      return us >= 0 ? std::to_string(us) : std::string("null");
    };
    std::string json =
        "{\n  \"benchmark\": \"l2-probe\",\n  \"gpu\": " +
        moss::bench::jsonString(prop.name) +
        ",\n  \"sms\": " + std::to_string(prop.multiProcessorCount) +
        ",\n  \"threads\": " + std::to_string(o.threads) +
        ",\n  \"empty_us\": " + number(emptyUs) + ",\n  \"results\": [";
    for (size_t i = 0; i < rows.size(); ++i)
      json += std::string(i ? "," : "") +
              "\n    {\"bytes\": " + std::to_string(rows[i].bytes) +
              ", \"ctas\": " + std::to_string(rows[i].ctas) + ", \"mode\": \"" +
              rows[i].mode + "\", \"hot_us\": " + number(rows[i].hotUs) +
              ", \"cold_us\": " + number(rows[i].coldUs) + "}";
    json += "\n  ]\n}\n";
    std::string writeErr;
    if (!moss::config::writeFileAtomic(o.jsonPath, json, writeErr)) {
      std::fprintf(stderr, "moss-l2-probe: %s\n", writeErr.c_str());
      return 1;
    }
  }
  cudaStreamDestroy(stream);
  return err.empty() ? 0 : 1;
}
