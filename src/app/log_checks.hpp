#pragma once
// What `verify` and `show` check of a ticket's log beyond its replay (verify.cpp).

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace board::app {

/// A warning when the log is long enough to slow every fold (spec/storage.md: over 10,000
/// events or 10 MB), else nullopt.
std::optional<std::string> long_log_warning(const std::filesystem::path& ticket_dir,
                                            std::size_t events);

}  // namespace board::app
