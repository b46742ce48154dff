#pragma once
// Entries kept in id order (id_less) are their own index: a binary search finds an id, with
// nothing to build per load or to keep in step when an entry changes.

#include <board/catalog.hpp>

#include <algorithm>
#include <string_view>

namespace board::catalog_detail {

/// Where the entry with `id` is or would be in `entries` (a vector of CatalogEntry in id
/// order, const or not).
template <class Entries>
auto position_in(Entries& entries, std::string_view id) {
    return std::lower_bound(
        entries.begin(), entries.end(), id, [](const CatalogEntry& e, std::string_view key) {
            return id_less(e.ticket.id, key);
        });
}

}  // namespace board::catalog_detail
