#include "cli/verify.hpp"

#include "cli/history.hpp"

#include <board/codec.hpp>
#include <board/next_action.hpp>
#include <board/reduce.hpp>
#include <board/sha256.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace board::cli {
namespace {

// Same thresholds as Temporal's history warnings (spec/storage.md).
constexpr std::size_t warn_events = 10'000;
constexpr std::uintmax_t warn_bytes = 10 * 1024 * 1024;

std::optional<std::string> read_file(const fs::path& path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return std::move(text).str();
}

void check_artifacts(const fs::path& dir, const Ticket& ticket, VerifyReport& report) {
    for (const auto kind : all_artifact_kinds) {
        const auto& artifact = ticket.artifact(kind);
        if (!artifact || artifact->sha256.empty()) continue;
        const auto content = read_file(dir / artifact->path);
        if (!content) {
            report.warnings.push_back(
                fmt::format("{} artifact {} is missing", to_string(kind), artifact->path));
        } else if (sha256_hex(*content) != artifact->sha256) {
            report.warnings.push_back(fmt::format(
                "{} was edited after it was recorded (sha256 differs)", artifact->path));
        }
    }
}

void check_snapshot(const fs::path& dir, const Ticket& folded, VerifyReport& report) {
    const auto text = read_file(dir / "ticket.json");
    if (!text) return;  // a cache: absent is fine, it is rebuilt
    auto snapshot = decode_ticket(*text);
    if (!snapshot) {
        report.faults.push_back(
            fmt::format("ticket.json does not decode: {}", snapshot.error().message));
    } else if (snapshot.value().seq < folded.seq) {
        // A cache behind the log is normal (the daemon appends without refreshing it); the
        // catalog never believes it and rebuilds it on the next board-wide read.
        report.warnings.push_back(fmt::format(
            "ticket.json is stale (seq {}, the log is at seq {}); it is rebuilt on the next list",
            snapshot.value().seq,
            folded.seq));
    } else if (!(snapshot.value() == folded)) {
        report.faults.push_back(
            fmt::format("ticket.json (seq {}) differs from the fold of the log (seq {})",
                        snapshot.value().seq,
                        folded.seq));
    }
}

}  // namespace

VerifyReport verify_ticket(const fs::path& board, const std::string& id) {
    VerifyReport report{id, {}, {}};
    const History history = read_history(board, id);
    if (history.error) {
        report.faults.push_back(history.error->message);
        report.unknown = history.error->kind == HistoryError::Kind::unknown_ticket;
        return report;
    }
    report.warnings.insert(report.warnings.end(), history.warnings.begin(), history.warnings.end());
    const fs::path dir = board / "tickets" / id;
    const Folded folded = fold(history.events);
    if (folded.failure) {
        const auto& [index, rejection] = *folded.failure;
        report.faults.push_back(fmt::format(
            "seq {} does not replay: {}", history.events[index].seq, rejection.message));
        return report;
    }
    if (folded.ticket.id != id && history.events.size() > 0 &&
        !std::any_of(history.events.begin(), history.events.end(), [](const Event& e) {
            return std::holds_alternative<Forked>(e.payload);
        })) {
        report.faults.push_back(fmt::format("the log is for {}, not {}", folded.ticket.id, id));
    }
    if (history.events.empty()) report.warnings.push_back("the log is empty");
    check_snapshot(dir, folded.ticket, report);
    check_artifacts(dir, folded.ticket, report);
    if (auto long_log = long_log_warning(dir, history.events.size()))
        report.warnings.push_back(std::move(*long_log));
    return report;
}

std::optional<std::string> long_log_warning(const fs::path& ticket_dir, std::size_t events) {
    std::error_code ec;
    const auto bytes = fs::file_size(ticket_dir / "events.jsonl", ec);
    if (events <= warn_events && (ec || bytes <= warn_bytes)) return std::nullopt;
    return fmt::format(
        "the log is long ({} events, {} bytes): every fold pays for it", events, ec ? 0 : bytes);
}

std::vector<std::string> list_ticket_ids(const fs::path& board, std::vector<VerifyReport>& strays) {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(board / "tickets", ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory()) continue;
        if (is_valid_ticket_id(name)) {
            ids.push_back(name);
        } else if (name.front() != '.') {
            strays.push_back(
                {name,
                 {fmt::format("tickets/{} is not a ticket id (expected PREFIX-N)", name)},
                 {}});
        }
    }
    std::sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) { return id_less(a, b); });
    return ids;
}

}  // namespace board::cli
