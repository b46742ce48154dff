// Scanning what an agent printed for its signal: runs over every byte of every run's output.
#include <board/agent_output.hpp>

#include <benchmark/benchmark.h>

#include <string>

namespace {

/// Typical agent output: prose, code fences quoting the protocol, tool logs; the signal last.
std::string agent_output(std::size_t bytes) {
    const std::string chunk =
        "Reading src/net/upload.cpp to see how failures surface to the caller.\n"
        "The client retries nothing today; 502s from the proxy bubble up as exceptions.\n"
        "```cpp\n"
        "// the protocol, quoted: <promise>COMPLETE</promise> must not count here\n"
        "auto result = client.put(url, body); // <- wrap this in retry_with_backoff\n"
        "```\n"
        "$ ctest -R upload  ->  12 tests passed, 0 failed (3.41 s)\n"
        "Next I will check the timeout handling in the proxy adapter and its tests.\n";
    std::string out;
    out.reserve(bytes + 128);
    while (out.size() < bytes) out += chunk;
    out += "<promise>COMPLETE: research.md written with the retry design</promise>\n";
    return out;
}

void bench_scan_signals(benchmark::State& state) {
    const std::string output = agent_output(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto scan = board::scan_signals(output);
        if (!scan.signal) state.SkipWithError("signal not found");
        benchmark::DoNotOptimize(scan);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(output.size()));
}

void bench_scan_questions(benchmark::State& state) {
    const std::string output = agent_output(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto scan = board::scan_questions(output);
        benchmark::DoNotOptimize(scan);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(output.size()));
}

}  // namespace

BENCHMARK(bench_scan_signals)->Arg(1 << 20)->Arg(10 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK(bench_scan_questions)->Arg(10 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
