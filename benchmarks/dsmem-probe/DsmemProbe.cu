//===- DsmemProbe.cu - Latency of a hand-over between two cluster CTAs ----===//
//
// moss-dsmem-probe: how long it takes one CTA of a thread-block cluster to
// hand B bytes to another, the step that ends every split-K GEMM (the
// finishing rank waits for the other ranks' partial sums). The two CTAs of
// each 2-CTA cluster play ping-pong: rank 0 sends, rank 1 waits for the
// bytes and sends them back, rank 0 waits; thread 0 of rank 0 times each
// round trip with %clock64. One-way time = round trip / 2, median over the
// rounds (after warm-up rounds) and then over the clusters.
//
// Transports, all from 256 threads that each own B / 256 bytes:
//   st.async     each thread's 16-byte st.async into the partner's shared
//                memory, completing bytes on its mbarrier (what the split-K
//                GEMMs do today)
//   bulk         each thread stores into its own shared memory; after a
//                proxy fence and bar.sync, thread 0 copies all B bytes with
//                one cp.async.bulk shared::cta -> shared::cluster
//   st+arrive    st.shared::cluster (weak remote stores), then each thread
//                arrives on the partner's mbarrier with release.cluster
//   st+bar+arrive  remote stores, bar.sync, one arrive.release.cluster by
//                thread 0 (the release is cumulative over the CTA's stores)
//   signal       no data: thread 0's remote arrive alone (the floor)
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

constexpr int kThreads = 256;
constexpr int kWarmupRounds = 8;
constexpr int kMaxBytes = 64 * 1024;

enum Transport : int { kStAsync, kBulk, kStArrive, kStBarArrive, kSignal };
const char *const kTransportNames[] = {"st.async", "bulk", "st+arrive",
                                       "st+bar+arrive", "signal"};
constexpr int kTransports = 5;

__device__ unsigned sharedAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ unsigned mapToRank(unsigned address, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(address), "r"(rank));
  return remote;
}

__device__ void clusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

/// Waits for phase `parity` of a local mbarrier, acquiring at cluster scope
/// (remote weak stores published by release.cluster arrivals).
__device__ void waitPhase(unsigned barrier, unsigned parity) {
  asm volatile("{ .reg .pred p; W%=: "
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, "
               "[%0], %1; @!p bra W%=; }" ::"r"(barrier),
               "r"(parity)
               : "memory");
}

__device__ void expectBytes(unsigned barrier, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier),
      "r"(bytes)
      : "memory");
}

__device__ void remoteArrive(unsigned remoteBarrier) {
  asm volatile(
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
          remoteBarrier)
      : "memory");
}

/// Arrivals each phase of the receive mbarrier expects.
__device__ unsigned arrivalsPerPhase(int transport) {
  return transport == kStArrive ? kThreads : 1;
}

/// Arms the next phase of this CTA's receive mbarrier where the transport
/// counts bytes (thread 0's own arrival carries the expected bytes).
__device__ void arm(int transport, unsigned barrier, unsigned bytes) {
  if (threadIdx.x == 0 && (transport == kStAsync || transport == kBulk))
    expectBytes(barrier, bytes);
}

__device__ void send(int transport, unsigned bytes, int4 *outbox,
                     unsigned inbox, unsigned barrier, unsigned partner,
                     int round) {
  const unsigned remoteInbox = mapToRank(inbox, partner);
  const unsigned remoteBarrier = mapToRank(barrier, partner);
  const unsigned vectors = bytes / 16;
  const int4 value = make_int4(round, threadIdx.x, 0, 0);
  switch (transport) {
  case kStAsync:
    for (unsigned i = threadIdx.x; i < vectors; i += kThreads)
      asm volatile(
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4."
          "b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(remoteInbox + 16 * i),
          "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w),
          "r"(remoteBarrier)
          : "memory");
    break;
  case kBulk:
    for (unsigned i = threadIdx.x; i < vectors; i += kThreads)
      outbox[i] = value;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0)
      asm volatile(
          "cp.async.bulk.shared::cluster.shared::cta.mbarrier::"
          "complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(remoteInbox),
          "r"(sharedAddress(outbox)), "r"(bytes), "r"(remoteBarrier)
          : "memory");
    break;
  case kStArrive:
  case kStBarArrive:
    for (unsigned i = threadIdx.x; i < vectors; i += kThreads)
      asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(
                       remoteInbox + 16 * i),
                   "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w)
                   : "memory");
    if (transport == kStArrive) {
      remoteArrive(remoteBarrier);
      break;
    }
    __syncthreads();
    if (threadIdx.x == 0)
      remoteArrive(remoteBarrier);
    break;
  case kSignal:
    if (threadIdx.x == 0)
      remoteArrive(remoteBarrier);
    break;
  }
}

/// Grid of 2-CTA clusters; rank 0's thread 0 writes one round-trip time in
/// cycles per round to cycles[cluster * rounds + round], and its %clock64
/// and %globaltimer spans to clock[cluster * 2 + {0, 1}].
__global__ void __cluster_dims__(2, 1, 1)
    pingPong(int transport, unsigned bytes, int rounds, long long *cycles,
             long long *clock, int *check) {
  extern __shared__ __align__(128) unsigned char shared[];
  int4 *outbox = reinterpret_cast<int4 *>(shared);
  int4 *inbox = reinterpret_cast<int4 *>(shared + kMaxBytes);
  unsigned long long *barrierWord =
      reinterpret_cast<unsigned long long *>(shared + 2 * kMaxBytes);
  const unsigned barrier = sharedAddress(barrierWord);
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  const unsigned partner = rank ^ 1;
  const int cluster = blockIdx.x / 2;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier),
                 "r"(arrivalsPerPhase(transport))
                 : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  arm(transport, barrier, bytes);
  clusterSync();

  long long t0 = 0, g0 = 0;
  for (int round = 0; round < kWarmupRounds + rounds; ++round) {
    const unsigned parity = round & 1;
    if (round == kWarmupRounds && rank == 0 && threadIdx.x == 0) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
      t0 = clock64();
    }
    // The bytes must be this round's: a stale inbox means a broken wait.
    // Checked before this CTA answers, after which the partner may write
    // the next round's.
    auto receive = [&] {
      waitPhase(barrier, parity);
      if (transport != kSignal && threadIdx.x < bytes / 16 &&
          inbox[threadIdx.x].x != round)
        atomicAdd(check, 1);
      arm(transport, barrier, bytes);
    };
    long long start = clock64();
    if (rank == 0) {
      send(transport, bytes, outbox, sharedAddress(inbox), barrier, partner,
           round);
      receive();
    } else {
      receive();
      send(transport, bytes, outbox, sharedAddress(inbox), barrier, partner,
           round);
    }
    long long stop = clock64();
    if (rank == 0 && threadIdx.x == 0 && round >= kWarmupRounds)
      cycles[cluster * rounds + round - kWarmupRounds] = stop - start;
    // Every thread has checked the inbox and is done with the outbox
    // before this CTA sends again.
    __syncthreads();
  }
  if (rank == 0 && threadIdx.x == 0) {
    long long g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    clock[2 * cluster] = clock64() - t0;
    clock[2 * cluster + 1] = g1 - g0;
  }
  // Neither CTA may exit while the other can still write into it.
  clusterSync();
}

struct Options {
  std::vector<int64_t> bytes = {16, 4096, 8192, 16384};
  std::vector<int64_t> clusters = {1, 48};
  int rounds = 64;
  std::string jsonPath;
};

bool parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = value != nullptr;
    if (arg == "--bytes" && ok)
      ok = moss::bench::parseSizeList(argv[++i], kMaxBytes, o.bytes);
    else if (arg == "--clusters" && ok)
      ok = moss::bench::parseSizeList(argv[++i], 66, o.clusters);
    else if (arg == "--rounds" && ok)
      o.rounds = std::atoi(argv[++i]);
    else if (arg == "--json" && ok)
      o.jsonPath = argv[++i];
    else
      ok = false;
    if (!ok || o.rounds < 1 || o.rounds > 4096) {
      std::fprintf(stderr,
                   "usage: moss-dsmem-probe [--bytes B,...] (multiples of "
                   "16, at most 65536) [--clusters C,...] (1..66) "
                   "[--rounds 1..4096] [--json PATH]\n");
      return false;
    }
  }
  for (int64_t b : o.bytes) {
    if (b % 16 != 0) {
      std::fprintf(stderr,
                   "moss-dsmem-probe: --bytes %lld is not a multiple "
                   "of 16\n",
                   static_cast<long long>(b));
      return false;
    }
  }
  return true;
}

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "moss-dsmem-probe: %s failed: %s (%s:%d)\n", #call, \
                   cudaGetErrorString(err_), __FILE__, __LINE__);              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Row {
  std::string transport;
  int64_t bytes, clusters;
  double oneWayNs, minNs, maxNs;
};

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o))
    return 2;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    std::fprintf(stderr, "moss-dsmem-probe: needs sm_90 (found sm_%d%d)\n",
                 prop.major, prop.minor);
    return 1;
  }
  const int sharedBytes = 2 * kMaxBytes + 16;
  CHECK_CUDA(cudaFuncSetAttribute(
      pingPong, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
  const int64_t maxClusters =
      *std::max_element(o.clusters.begin(), o.clusters.end());
  long long *cycles, *clock;
  int *check;
  CHECK_CUDA(cudaMalloc(&cycles, maxClusters * o.rounds * sizeof(long long)));
  CHECK_CUDA(cudaMalloc(&clock, maxClusters * 2 * sizeof(long long)));
  CHECK_CUDA(cudaMalloc(&check, sizeof(int)));

  std::printf("moss-dsmem-probe: %s, one-way hand-over between the 2 CTAs of "
              "a cluster (round trip / 2), %d threads, median of %d rounds "
              "then over clusters (min / max over clusters)\n",
              prop.name, kThreads, o.rounds);
  std::printf("%-14s %7s %8s %9s %9s %9s\n", "transport", "bytes", "clusters",
              "ns", "min", "max");
  std::vector<Row> rows;
  bool ok = true;
  for (int transport = 0; transport < kTransports; ++transport) {
    for (int64_t bytes : o.bytes) {
      if (transport == kSignal && bytes != o.bytes.front())
        continue;
      for (int64_t clusters : o.clusters) {
        CHECK_CUDA(cudaMemset(check, 0, sizeof(int)));
        pingPong<<<2 * clusters, kThreads, sharedBytes>>>(
            transport, static_cast<unsigned>(bytes), o.rounds, cycles, clock,
            check);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
        int bad = 0;
        std::vector<long long> hostCycles(clusters * o.rounds),
            hostClock(clusters * 2);
        CHECK_CUDA(
            cudaMemcpy(&bad, check, sizeof(int), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(hostCycles.data(), cycles,
                              hostCycles.size() * sizeof(long long),
                              cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(hostClock.data(), clock,
                              hostClock.size() * sizeof(long long),
                              cudaMemcpyDeviceToHost));
        std::vector<double> perCluster;
        for (int64_t c = 0; c < clusters; ++c) {
          double ghz = static_cast<double>(hostClock[2 * c]) /
                       std::max<long long>(1, hostClock[2 * c + 1]);
          std::vector<double> ns;
          for (int r = 0; r < o.rounds; ++r)
            ns.push_back(hostCycles[c * o.rounds + r] / ghz / 2);
          perCluster.push_back(median(ns));
        }
        Row row{kTransportNames[transport],
                bytes,
                clusters,
                median(perCluster),
                *std::min_element(perCluster.begin(), perCluster.end()),
                *std::max_element(perCluster.begin(), perCluster.end())};
        std::printf("%-14s %7lld %8lld %9.0f %9.0f %9.0f%s\n",
                    row.transport.c_str(), static_cast<long long>(bytes),
                    static_cast<long long>(clusters), row.oneWayNs, row.minNs,
                    row.maxNs, bad ? "  STALE DATA" : "");
        if (bad)
          ok = false;
        rows.push_back(row);
      }
    }
  }
  if (!o.jsonPath.empty()) {
    std::string json = "{\n  \"gpu\": " + moss::bench::jsonString(prop.name) +
                       ",\n  \"rounds\": " + std::to_string(o.rounds) +
                       ",\n  \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "%s\n    {\"transport\": \"%s\", \"bytes\": %lld, "
                    "\"clusters\": %lld, \"one_way_ns\": %.1f, \"min_ns\": "
                    "%.1f, \"max_ns\": %.1f}",
                    i ? "," : "", rows[i].transport.c_str(),
                    static_cast<long long>(rows[i].bytes),
                    static_cast<long long>(rows[i].clusters), rows[i].oneWayNs,
                    rows[i].minNs, rows[i].maxNs);
      json += line;
    }
    json += "\n  ]\n}\n";
    std::string writeErr;
    if (!moss::config::writeFileAtomic(o.jsonPath, json, writeErr)) {
      std::fprintf(stderr, "moss-dsmem-probe: %s\n", writeErr.c_str());
      return 1;
    }
  }
  if (!ok)
    std::fprintf(stderr, "moss-dsmem-probe: a transport delivered stale data "
                         "(its wait is broken)\n");
  return ok ? 0 : 1;
}
