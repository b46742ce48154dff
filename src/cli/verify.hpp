#pragma once
// `board verify`: every check the board can make of a ticket without trusting any cache.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace board::cli {

struct VerifyReport {
    std::string ticket;
    std::vector<std::string> faults;    ///< real problems: `verify` exits non-zero
    std::vector<std::string> warnings;  ///< worth knowing: edited artifacts, long logs
    bool unknown = false;               ///< no such ticket (or not an id): nothing to check
};

/// Checks one ticket: the log parses, seqs are contiguous, it replays with no rejection, the
/// snapshot (if any) equals the fold (one behind the log is a warning: a stale cache), artifacts
/// are unchanged since recorded, sizes are sane.
VerifyReport verify_ticket(const std::filesystem::path& board, const std::string& id);

/// spec/storage.md: a log over 10,000 events or 10 MB draws a warning from `show` and
/// `verify` (long histories slow every fold). The warning, or nullopt.
std::optional<std::string> long_log_warning(const std::filesystem::path& ticket_dir,
                                            std::size_t events);

/// The ids of every ticket folder on the board, in id order. Folders whose names are not
/// ticket ids are reported as faults of a pseudo-ticket named after the folder.
std::vector<std::string> list_ticket_ids(const std::filesystem::path& board,
                                         std::vector<VerifyReport>& strays);

}  // namespace board::cli
