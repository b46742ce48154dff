// `verify`: every check of a ticket's log without trusting any cache (spec/cli.md).

#include "app/log_checks.hpp"
#include "support/files.hpp"

#include <board/app.hpp>
#include <board/artifact.hpp>
#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/reduce.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace fs = std::filesystem;

namespace board::app {
namespace {

// Same thresholds as Temporal's history warnings (spec/storage.md).
constexpr std::size_t warn_events = 10'000;
constexpr std::uintmax_t warn_bytes = 10 * 1024 * 1024;

}  // namespace

std::optional<std::string> long_log_warning(const fs::path& ticket_dir, std::size_t events) {
    std::error_code ec;
    const auto bytes = fs::file_size(ticket_dir / log_file_name, ec);
    if (events <= warn_events && (ec || bytes <= warn_bytes)) return std::nullopt;
    return fmt::format(
        "the log is long ({} events, {} bytes): every fold pays for it", events, ec ? 0 : bytes);
}

namespace {

void check_artifacts(const fs::path& dir, const Ticket& ticket, VerifyReport& report) {
    for (const auto kind : all_artifact_kinds) {
        const auto& artifact = ticket.artifact(kind);
        if (!artifact || artifact->sha256.empty()) continue;
        std::string error;
        const auto read = read_artifact(dir / artifact->path, error);
        if (!read) {
            report.warnings.push_back(
                fmt::format("{} artifact {} is missing", to_string(kind), artifact->path));
        } else if (read->sha256 != artifact->sha256) {
            report.warnings.push_back(fmt::format(
                "{} was edited after it was recorded (sha256 differs)", artifact->path));
        }
    }
}

/// An event id names one event of its log (storage.md: what makes a retried append
/// idempotent); the same id twice is an append applied twice, or a line copied by hand.
void check_event_ids(const std::vector<Event>& events, VerifyReport& report) {
    std::unordered_map<std::string_view, std::int64_t> first_seq;
    for (const Event& e : events) {
        const auto [it, fresh] = first_seq.emplace(e.id, e.seq);
        if (!fresh)
            report.faults.push_back(
                fmt::format("seq {} repeats the event id {} of seq {}", e.seq, e.id, it->second));
    }
}

void check_snapshot(const fs::path& dir, const Ticket& folded, VerifyReport& report) {
    const auto text = read_whole_file(dir / snapshot_file_name, AT_FDCWD, 64u << 20);
    if (!text) return;  // written by writers for people and tools; absent is fine
    auto snapshot = decode_ticket(*text);
    if (!snapshot) {
        report.faults.push_back(
            fmt::format("ticket.json does not decode: {}", snapshot.error().message));
    } else if (snapshot.value().seq < folded.seq) {
        // Behind the log is normal: the daemon appends without refreshing it.
        report.warnings.push_back(fmt::format(
            "ticket.json is stale (seq {}, the log is at seq {}); the next write refreshes it",
            snapshot.value().seq,
            folded.seq));
    } else if (!(snapshot.value() == folded)) {
        // A snapshot written before handoff service levels has none of their fields: it is
        // behind, like a stale one, not wrong.
        Ticket upgraded = snapshot.value();
        upgraded.awaiting_since = folded.awaiting_since;
        upgraded.reminders = folded.reminders;
        upgraded.reminded_at = folded.reminded_at;
        upgraded.escalated_at = folded.escalated_at;
        upgraded.escalated_to = folded.escalated_to;
        if (upgraded == folded && snapshot.value().awaiting_since == 0) {
            report.warnings.push_back(
                "ticket.json predates handoff service levels (no awaiting_since); the next "
                "write refreshes it");
            return;
        }
        report.faults.push_back(
            fmt::format("ticket.json (seq {}) differs from the fold of the log (seq {})",
                        snapshot.value().seq,
                        folded.seq));
    }
}

}  // namespace

std::vector<VerifyReport> Board::verify(const std::vector<std::string>& requested) {
    std::vector<VerifyReport> reports;
    std::vector<std::string> ids = requested;
    if (ids.empty()) {
        std::error_code ec;
        fs::directory_iterator listing(root_ / "tickets", ec);
        if (ec) {
            reports.push_back(
                {"tickets",
                 {fmt::format("cannot list {}: {}", (root_ / "tickets").string(), ec.message())},
                 {},
                 false});
        }
        for (const auto& entry : listing) {
            const std::string name = entry.path().filename().string();
            std::error_code kind_ec;
            if (!entry.is_directory(kind_ec) || entry.is_symlink(kind_ec)) {
                if (is_valid_ticket_id(name))
                    reports.push_back(
                        {name,
                         {fmt::format("tickets/{} is not a folder (a file or a symbolic link)",
                                      name)},
                         {},
                         false});
                continue;
            }
            if (is_valid_ticket_id(name)) {
                ids.push_back(name);
            } else if (name.front() != '.') {
                reports.push_back(
                    {name,
                     {fmt::format("tickets/{} is not a ticket id (expected PREFIX-N)", name)},
                     {},
                     false});
            }
        }
        std::sort(
            ids.begin(), ids.end(), [](const auto& a, const auto& b) { return id_less(a, b); });
    }
    for (const auto& id : ids) {
        VerifyReport report{id, {}, {}, false};
        auto history = this->history(id);
        if (!history) {
            report.faults.push_back(history.error().message);
            report.unknown = history.error().kind == Refusal::Kind::not_found;
            reports.push_back(std::move(report));
            continue;
        }
        const auto& events = history.value().events;
        report.warnings = history.value().warnings;
        const fs::path dir = root_ / "tickets" / id;
        // A torn tail is a write a crash cut short: reading moved it aside just now, so this
        // check names it; the bytes stay in the .torn file until a person deletes it.
        const fs::path torn = dir / (std::string{log_file_name} + ".torn");
        std::error_code torn_ec;
        if (history.value().torn_bytes > 0) {
            report.faults.push_back(fmt::format(
                "the log's last line was incomplete (a write cut short): {} bytes moved to {}",
                history.value().torn_bytes,
                torn.string()));
        } else if (const auto size = fs::file_size(torn, torn_ec); !torn_ec) {
            report.warnings.push_back(fmt::format(
                "{} holds {} bytes moved aside from a torn tail: read them, then delete it",
                torn.string(),
                size));
        }
        const Folded folded = fold(events);
        if (folded.failure) {
            const auto& [index, rejection] = *folded.failure;
            report.faults.push_back(
                fmt::format("seq {} does not replay: {}", events[index].seq, rejection.message));
            reports.push_back(std::move(report));
            continue;
        }
        const bool forked = std::any_of(events.begin(), events.end(), [](const Event& e) {
            return std::holds_alternative<Forked>(e.payload);
        });
        if (folded.ticket.id != id && !events.empty() && !forked)
            report.faults.push_back(fmt::format("the log is for {}, not {}", folded.ticket.id, id));
        if (events.empty()) report.warnings.push_back("the log is empty");
        check_event_ids(events, report);
        check_snapshot(dir, folded.ticket, report);
        check_artifacts(dir, folded.ticket, report);
        if (auto long_log = long_log_warning(dir, events.size()))
            report.warnings.push_back(std::move(*long_log));
        reports.push_back(std::move(report));
    }
    return reports;
}

}  // namespace board::app
