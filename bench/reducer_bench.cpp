// Folding a ticket's log in memory: the cost of every replay, snapshot rebuild and `verify`.
#include "realistic_log.hpp"

#include <board/reduce.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

std::vector<board::Event> checked_log(std::size_t events) {
    auto log = board::bench::realistic_log(events);
    if (const auto check = board::fold(log); check.failure) {
        std::fprintf(stderr,
                     "generator bug at event %zu: %s\n",
                     check.failure->first,
                     check.failure->second.message.c_str());
        std::abort();
    }
    return log;
}

/// Event by event through reduce(), moving the ticket in and out, as the event log replays.
void bench_fold_realistic_log(benchmark::State& state) {
    const auto log = checked_log(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        board::Ticket ticket;
        for (const auto& event : log) {
            board::Reduced next = board::reduce(std::move(ticket), event);
            ticket = std::move(next).value();
        }
        benchmark::DoNotOptimize(ticket);
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

/// fold(): the same events applied in place.
void bench_fold_in_place(benchmark::State& state) {
    const auto log = checked_log(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto folded = board::fold(log);
        benchmark::DoNotOptimize(folded);
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void bench_reduce_one_note(benchmark::State& state) {
    const auto log = board::bench::realistic_log(64);
    const board::Ticket base = board::fold(log).ticket;
    board::Event note{1,
                      base.seq + 1,
                      "n",
                      base.updated_at + 1,
                      {board::ActorKind::human, "ana"},
                      board::NoteAdded{"one more note"}};
    for (auto _ : state) {
        board::Reduced next = board::reduce(base, note);  // includes copying the ticket in
        benchmark::DoNotOptimize(next);
    }
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(bench_fold_realistic_log)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(bench_fold_in_place)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(bench_reduce_one_note);
BENCHMARK_MAIN();
