// The log format's cost: encoding and decoding events against bare Boost.JSON parsing of the
// very same bytes (the floor any JSON-lines reader pays), measured in one run.
#include "realistic_log.hpp"

#include <board/codec.hpp>

#include <benchmark/benchmark.h>
#include <boost/json.hpp>

#include <string>
#include <vector>

namespace {

const std::vector<std::string>& encoded_lines() {
    static const std::vector<std::string> lines = [] {
        std::vector<std::string> out;
        for (const auto& e : board::bench::realistic_log(10'000))
            out.push_back(board::encode_event(e));
        return out;
    }();
    return lines;
}

std::int64_t total_bytes(const std::vector<std::string>& lines) {
    std::int64_t bytes = 0;
    for (const auto& l : lines) bytes += static_cast<std::int64_t>(l.size());
    return bytes;
}

/// Baseline: bare `boost::json::parse` of each line, the call any JSON-lines reader starts with.
void bench_bare_json_parse(benchmark::State& state) {
    const auto& lines = encoded_lines();
    for (auto _ : state) {
        for (const auto& line : lines) {
            boost::system::error_code ec;
            auto value = boost::json::parse(line, ec);
            benchmark::DoNotOptimize(value);
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(lines.size()));
    state.SetBytesProcessed(state.iterations() * total_bytes(lines));
}

/// The fastest bare parse: a reused parser writing into a reused stack arena (no heap at all).
void bench_bare_json_parse_arena(benchmark::State& state) {
    const auto& lines = encoded_lines();
    boost::json::parser parser;
    alignas(16) static unsigned char buffer[64 * 1024];
    for (auto _ : state) {
        for (const auto& line : lines) {
            boost::json::monotonic_resource arena{buffer, sizeof buffer};
            parser.reset(&arena);
            boost::system::error_code ec;
            parser.write(line, ec);
            auto value = parser.release();
            benchmark::DoNotOptimize(value);
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(lines.size()));
    state.SetBytesProcessed(state.iterations() * total_bytes(lines));
}

void bench_decode_events(benchmark::State& state) {
    const auto& lines = encoded_lines();
    board::EventDecoder decoder;
    for (auto _ : state) {
        for (const auto& line : lines) {
            auto event = decoder.decode(line);
            if (!event) state.SkipWithError(event.error().message.c_str());
            benchmark::DoNotOptimize(event);
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(lines.size()));
    state.SetBytesProcessed(state.iterations() * total_bytes(lines));
}

/// The goal's measure: encode then decode every event, bytes counted once.
void bench_encode_decode_events(benchmark::State& state) {
    const auto events = board::bench::realistic_log(10'000);
    const auto& lines = encoded_lines();
    board::EventDecoder decoder;
    std::string line;
    for (auto _ : state) {
        for (const auto& e : events) {
            line.clear();
            board::append_event(line, e);
            auto event = decoder.decode(line);
            benchmark::DoNotOptimize(event);
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events.size()));
    state.SetBytesProcessed(state.iterations() * total_bytes(lines));
}

}  // namespace

BENCHMARK(bench_bare_json_parse)->Unit(benchmark::kMillisecond);
BENCHMARK(bench_bare_json_parse_arena)->Unit(benchmark::kMillisecond);
BENCHMARK(bench_decode_events)->Unit(benchmark::kMillisecond);
BENCHMARK(bench_encode_decode_events)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
