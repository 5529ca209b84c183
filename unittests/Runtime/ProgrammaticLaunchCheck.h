//===- ProgrammaticLaunchCheck.h - PDL GPU test protocol ----*- C++ -*-===//
//
// A programmatic-launch test item has enqueuePrologue(stream) (stale inputs
// in place, out poisoned, then a DelayedCopy of the fresh inputs) and
// check(how) (the result equals a plain launch on the fresh inputs, and out
// was not written before the delayed copy read it). These run the items'
// launches after their prologues, eagerly and replayed in a CUDA graph.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_UNITTESTS_RUNTIME_PROGRAMMATICLAUNCHCHECK_H
#define MOSS_UNITTESTS_RUNTIME_PROGRAMMATICLAUNCHCHECK_H

#include "RuntimeTestSupport.h"

#include <string>

namespace moss::runtime::test {

/// For each item: its prologue, `launch(item)` on `rt` (a runtime that
/// launches programmatically), a sync and the item's check.
template <typename Items, typename Launch>
void checkEagerly(const Items &items, cudaStream_t stream, moss_runtime_t rt,
                  Launch launch) {
  for (const auto &item : items) {
    item->enqueuePrologue(stream);
    ASSERT_EQ(launch(*item), MOSS_OK) << moss_runtime_last_error(rt);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    item->check("eager");
  }
}

/// Every item's prologue and launch captured into one graph, replayed
/// `replays` times, every item checked after each replay.
template <typename Items, typename Launch>
void checkGraphReplays(const Items &items, cudaStream_t stream,
                       moss_runtime_t rt, Launch launch, int replays = 3) {
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  CapturedGraph graph;
  ASSERT_NO_FATAL_FAILURE(graph.capture(stream, [&] {
    for (const auto &item : items) {
      item->enqueuePrologue(stream);
      EXPECT_EQ(launch(*item), MOSS_OK) << moss_runtime_last_error(rt);
    }
  }));
  for (int replay = 0; replay < replays; ++replay) {
    ASSERT_EQ(graph.launch(stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    for (const auto &item : items)
      item->check("graph replay " + std::to_string(replay));
  }
}

} // namespace moss::runtime::test

#endif // MOSS_UNITTESTS_RUNTIME_PROGRAMMATICLAUNCHCHECK_H
