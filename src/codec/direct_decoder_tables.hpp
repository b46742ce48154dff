#pragma once
// The tables the direct decoder (direct_decoder.cpp) walks: for each wire struct, its fields
// in describe() order, where each one sits in the struct and what each kind of JSON value does
// to it; for each payload, the `type` that names it. Built once, in direct_decoder_tables.cpp,
// from the same describe() functions (schema.hpp) that drive encoding and the document path.

#include <board/event.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace board::codec_detail::direct {

struct StructTable;

/// What a JSON value does to a field of one C++ type, by the kind of the value. A missing
/// entry means that kind of value is wrong for the field, and the fast path gives up.
struct ValueOps {
    /// Where the value lands: the field itself, or a fresh value in the field's std::optional
    /// (engaged only when the key is present, as the document path does).
    void* (*resolve)(void* field) = nullptr;
    bool (*string)(void* target, std::string_view text) = nullptr;
    bool (*integer)(void* target, std::int64_t number) = nullptr;
    bool (*number)(void* target, double number) = nullptr;
    bool (*boolean)(void* target, bool flag) = nullptr;
    const StructTable* object = nullptr;  ///< a struct with a describe(): its fields
    const ValueOps* element = nullptr;    ///< a std::vector: what its elements take
    void (*clear)(void* vector) = nullptr;
    void* (*append)(void* vector) = nullptr;  ///< a new default element, to fill
};

/// Key equality without a call to memcmp: keys are a few bytes long and compared once or
/// twice per key, so the call would cost more than the comparison.
inline bool same_key(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

struct FieldSpec {
    std::string_view name;
    std::size_t offset = 0;  ///< of the field within its struct
    const ValueOps* ops = nullptr;
};

/// The wire fields of one struct, in describe() order. The masks have one bit per field,
/// which is why a struct may have at most 64 of them.
struct StructTable {
    std::vector<FieldSpec> fields;
    std::uint64_t required_mask = 0;

    /// The index of the field named `key`, or -1. `hint` is where to look first: the codec
    /// writes fields in describe() order, so the field after the last one found is usually it.
    int find(std::string_view key, std::size_t& hint) const {
        const std::size_t n = fields.size();
        if (hint < n && same_key(fields[hint].name, key)) return static_cast<int>(hint++);
        for (std::size_t i = 0; i < n; ++i) {
            if (same_key(fields[i].name, key)) {
                hint = i + 1;
                return static_cast<int>(i);
            }
        }
        return -1;
    }
};

/// The envelope key whose value picks the payload.
inline constexpr std::string_view type_key = "type";

/// A payload: its `type`, how to make it the Event's payload, and its fields.
struct PayloadSpec {
    std::string_view name;
    void* (*emplace)(Payload&);
    const StructTable* table;
};

using PayloadSpecs = std::array<PayloadSpec, std::variant_size_v<Payload>>;

/// The envelope, as read_event() reads it (`type` is handled apart: it picks the payload).
const StructTable& envelope_table();

/// Every payload, in Payload's order. Throws std::logic_error if a payload field is named like
/// an envelope field or `type` (a mistake in schema.hpp).
const PayloadSpecs& payload_specs();

}  // namespace board::codec_detail::direct
