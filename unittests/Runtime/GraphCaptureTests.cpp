//===- GraphCaptureTests.cpp - CUDA graphs and concurrent streams ---------===//
//
// A captured and replayed sequence of calls must equal the same calls made
// eagerly, bit for bit (both paths, all modes), and calls from several
// threads on their own streams must not disturb each other.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/Whitelist.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>

using namespace moss::runtime::test;

namespace {

struct Call {
  int64_t m, n, k;
  int mode;
};

/// Inputs and two outputs of one call, on the device.
struct CallData {
  Call call;
  std::vector<uint16_t> x, w, scale, res, gamma, beta;
  std::unique_ptr<DeviceBuffer> dx, dw, dscale, dres, dgamma, dbeta, eager,
      graph;

  CallData(Call c, std::mt19937_64 &rng) : call(c) {
    double wRange = 2.0 / std::sqrt(static_cast<double>(c.k));
    x = randomBf16(c.m * c.k, -1, 1, rng);
    w = randomBf16(c.n * c.k, -wRange, wRange, rng);
    scale = randomBf16(c.n, -0.5, 0.5, rng);
    res = randomBf16(c.m * c.n, -2, 2, rng);
    gamma = randomBf16(c.k, 0.5, 1.5, rng);
    beta = randomBf16(c.k, -0.5, 0.5, rng);
    dx = std::make_unique<DeviceBuffer>(x.size() * 2);
    dgamma = std::make_unique<DeviceBuffer>(gamma.size() * 2);
    dbeta = std::make_unique<DeviceBuffer>(beta.size() * 2);
    upload(dgamma->data(), gamma);
    upload(dbeta->data(), beta);
    dw = std::make_unique<DeviceBuffer>(w.size() * 2);
    dscale = std::make_unique<DeviceBuffer>(scale.size() * 2);
    dres = std::make_unique<DeviceBuffer>(res.size() * 2);
    eager = std::make_unique<DeviceBuffer>(c.m * c.n * 2);
    graph = std::make_unique<DeviceBuffer>(c.m * c.n * 2);
    upload(dx->data(), x);
    upload(dw->data(), w);
    upload(dscale->data(), scale);
    upload(dres->data(), res);
  }

  moss_status_t run(moss_runtime_t rt, void *out, cudaStream_t stream) const {
    GemmOperands ops;
    ops.x = dx->data();
    ops.w = dw->data();
    ops.scale = dscale->data();
    ops.residual = dres->data();
    ops.gamma = dgamma->data();
    ops.beta = dbeta->data();
    ops.out = out;
    return callGemm(rt, call.m, call.n, call.k, call.mode, ops, stream);
  }

  std::vector<double> reference() const {
    return referenceOfKey({call.m, call.n, call.k, call.mode}, x, w, scale, res,
                          gamma, beta);
  }
};

/// The generated runtime when kernels are available, else fallback only;
/// `calls` gets fallback shapes plus the whitelist's keys when generated.
void makeRuntime(RuntimeHandle &h, std::vector<Call> &calls,
                 std::string &which) {
  // The LayerNorm fallback normalises rows in chunks of the workspace slot:
  // 30720 rows of k = 1280 take five.
  calls = {{1, 3072, 768, 1},   {7, 5120, 1280, 1}, {33, 768, 3072, 2},
           {64, 1280, 5120, 2}, {5, 3072, 768, 0},  {17, 5120, 1280, 0},
           {3, 2304, 768, 3},   {16, 3072, 768, 4}, {30720, 256, 1280, 3}};
  std::string dir = testKernelsDir(), why;
  if (whyNoManifest(dir).empty() && deviceIsSm90(why)) {
    moss::config::Whitelist whitelist;
    std::string err;
    if (moss::config::Whitelist::load(testWhitelist(), whitelist, err) &&
        moss_runtime_create(dir.c_str(), testWhitelist().c_str(), &h.rt) ==
            MOSS_OK) {
      for (const auto &e : whitelist.entries())
        if (isPlainGemmMode(e.key.mode))
          calls.push_back({e.key.m, e.key.n, e.key.k, e.key.mode});
      which = "generated kernels from " + dir + " and the fallback";
      return;
    }
    ADD_FAILURE() << "kernels in " << dir
                  << " unusable: " << moss_runtime_last_error(nullptr) << err;
  }
  which = "the fallback only (" + whyNoManifest(dir) + why + ")";
  ASSERT_EQ(moss_runtime_create(nullptr, nullptr, &h.rt), MOSS_OK)
      << moss_runtime_last_error(nullptr);
}

TEST(GraphCapture, ReplayEqualsEagerBitForBit) {
  MOSS_REQUIRE_GPU();
  RuntimeHandle h;
  std::vector<Call> calls;
  std::string which;
  makeRuntime(h, calls, which);
  ASSERT_NE(h.rt, nullptr);
  RecordProperty("paths", which);
  std::mt19937_64 rng(99);
  std::vector<std::unique_ptr<CallData>> data;
  for (const Call &c : calls)
    data.push_back(std::make_unique<CallData>(c, rng));

  cudaStream_t eagerStream = nullptr, captureStream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&eagerStream), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&captureStream), cudaSuccess);
  for (auto &d : data) {
    poison(d->eager->data(), d->call.m * d->call.n);
    ASSERT_EQ(d->run(h.rt, d->eager->data(), eagerStream), MOSS_OK)
        << moss_runtime_last_error(h.rt);
  }
  ASSERT_EQ(cudaStreamSynchronize(eagerStream), cudaSuccess);

  CapturedGraph graph;
  ASSERT_NO_FATAL_FAILURE(graph.capture(captureStream, [&] {
    for (auto &d : data)
      EXPECT_EQ(d->run(h.rt, d->graph->data(), captureStream), MOSS_OK)
          << moss_runtime_last_error(h.rt);
  }));

  for (int replay = 0; replay < 2; ++replay) {
    for (auto &d : data)
      poison(d->graph->data(), d->call.m * d->call.n);
    ASSERT_EQ(graph.launch(captureStream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(captureStream), cudaSuccess);
    for (auto &d : data) {
      const Call &c = d->call;
      SCOPED_TRACE("replay " + std::to_string(replay) +
                   " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                   " k=" + std::to_string(c.k) +
                   " mode=" + std::to_string(c.mode));
      std::vector<uint16_t> eager = download(d->eager->data(), c.m * c.n);
      std::vector<uint16_t> replayed = download(d->graph->data(), c.m * c.n);
      EXPECT_EQ(countNaN(eager), 0u);
      EXPECT_TRUE(eager == replayed) << "graph replay differs from eager";
      if (replay == 0) {
        EXPECT_LT(relativeL2(eager, d->reference()), kRelativeL2Tolerance);
      }
    }
  }
  cudaStreamDestroy(eagerStream);
  cudaStreamDestroy(captureStream);
}

/// A shape's first call and a stream's first call can both happen inside a
/// capture: the cuBLASLt plan is made on the host, the slot bound on the host.
TEST(GraphCapture, FirstUseOfShapeAndStreamInsideCapture) {
  MOSS_REQUIRE_GPU();
  RuntimeHandle h;
  ASSERT_EQ(moss_runtime_create(nullptr, nullptr, &h.rt), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  std::mt19937_64 rng(123);
  CallData d({23, 5120, 1280, 1}, rng);
  cudaStream_t captureStream = nullptr, eagerStream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&captureStream), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&eagerStream), cudaSuccess);
  CapturedGraph graph;
  ASSERT_NO_FATAL_FAILURE(graph.capture(
      captureStream,
      [&] {
        EXPECT_EQ(d.run(h.rt, d.graph->data(), captureStream), MOSS_OK)
            << moss_runtime_last_error(h.rt);
      },
      cudaStreamCaptureModeThreadLocal));
  poison(d.graph->data(), d.call.m * d.call.n);
  ASSERT_EQ(graph.launch(captureStream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(captureStream), cudaSuccess);
  ASSERT_EQ(d.run(h.rt, d.eager->data(), eagerStream), MOSS_OK)
      << moss_runtime_last_error(h.rt);
  ASSERT_EQ(cudaStreamSynchronize(eagerStream), cudaSuccess);
  std::vector<uint16_t> replayed =
      download(d.graph->data(), d.call.m * d.call.n);
  std::vector<uint16_t> eager = download(d.eager->data(), d.call.m * d.call.n);
  EXPECT_EQ(countNaN(replayed), 0u);
  EXPECT_TRUE(replayed == eager) << "graph replay differs from eager";
  EXPECT_LT(relativeL2(replayed, d.reference()), kRelativeL2Tolerance);
  cudaStreamDestroy(captureStream);
  cudaStreamDestroy(eagerStream);
}

TEST(ConcurrentStreams, ThreadsOnOwnStreamsGetCorrectResults) {
  MOSS_REQUIRE_GPU();
  RuntimeHandle h;
  std::vector<Call> calls;
  std::string which;
  makeRuntime(h, calls, which);
  ASSERT_NE(h.rt, nullptr);
  // More threads than workspace slots: the late streams run without one.
  constexpr int kThreads = 6, kRounds = 20;
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::unique_ptr<CallData>>> perThread(kThreads);
  for (auto &mine : perThread)
    for (const Call &c : calls)
      mine.push_back(std::make_unique<CallData>(c, rng));
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cudaStream_t stream = nullptr;
      cudaStreamCreate(&stream);
      for (int round = 0; round < kRounds && failures[t].empty(); ++round)
        for (auto &d : perThread[t])
          if (d->run(h.rt, d->eager->data(), stream) != MOSS_OK)
            failures[t] = moss_runtime_last_error(h.rt);
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    });
  }
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(failures[t], "") << "thread " << t;
    for (auto &d : perThread[t]) {
      const Call &c = d->call;
      SCOPED_TRACE("thread " + std::to_string(t) + " m=" + std::to_string(c.m) +
                   " n=" + std::to_string(c.n) +
                   " mode=" + std::to_string(c.mode));
      std::vector<uint16_t> got = download(d->eager->data(), c.m * c.n);
      EXPECT_LT(relativeL2(got, d->reference()), kRelativeL2Tolerance);
    }
  }
}

/// With one workspace slot, a second stream's first LayerNorm fallback call
/// reserves a slot of its own: refused, saying why, while that stream is
/// captured; fine eagerly, and then under capture too.
TEST(ConcurrentStreams, LayerNormFallbackReservesASlotOnlyOutsideCapture) {
  MOSS_REQUIRE_GPU();
  RuntimeHandle h;
  ASSERT_EQ(createWithEnv("", "MOSS_RUNTIME_WORKSPACE_SLOTS", "1", h), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  std::mt19937_64 rng(8);
  CallData d({5, 2304, 768, 3}, rng);
  cudaStream_t first = nullptr, second = nullptr;
  ASSERT_EQ(cudaStreamCreate(&first), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&second), cudaSuccess);
  ASSERT_EQ(d.run(h.rt, d.eager->data(), first), MOSS_OK)
      << moss_runtime_last_error(h.rt); // takes the one slot

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(second, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  moss_status_t captured = d.run(h.rt, d.graph->data(), second);
  std::string message = moss_runtime_last_error(h.rt);
  ASSERT_EQ(cudaStreamEndCapture(second, &graph), cudaSuccess);
  cudaGraphDestroy(graph);
  EXPECT_EQ(captured, MOSS_ERROR_UNSUPPORTED);
  EXPECT_NE(message.find("cannot be reserved during stream capture"),
            std::string::npos)
      << message;

  poison(d.graph->data(), 5 * 2304);
  ASSERT_EQ(d.run(h.rt, d.graph->data(), second), MOSS_OK)
      << moss_runtime_last_error(h.rt);
  CapturedGraph replay;
  ASSERT_NO_FATAL_FAILURE(replay.capture(second, [&] {
    EXPECT_EQ(d.run(h.rt, d.graph->data(), second), MOSS_OK)
        << moss_runtime_last_error(h.rt);
  }));
  poison(d.graph->data(), 5 * 2304);
  ASSERT_EQ(replay.launch(second), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(second), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(first), cudaSuccess);
  EXPECT_LT(relativeL2(download(d.graph->data(), 5 * 2304), d.reference()),
            kRelativeL2Tolerance);
  EXPECT_TRUE(download(d.graph->data(), 5 * 2304) ==
              download(d.eager->data(), 5 * 2304));
  cudaStreamDestroy(first);
  cudaStreamDestroy(second);
}

} // namespace
