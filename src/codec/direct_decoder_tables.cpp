// The direct decoder's tables (direct_decoder_tables.hpp), built from the describe()
// functions in schema.hpp: what each C++ field type accepts (the same checks, in effect, as the
// document path's Reader), each struct's fields and their offsets, and the payloads by `type`.

#include "direct_decoder_tables.hpp"

#include "json_io.hpp"
#include "schema.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace board::codec_detail::direct {
namespace {

template <class T>
struct is_optional : std::false_type {};

template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};

template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

void* the_field(void* field) {
    return field;
}

template <class T>
const ValueOps& ops_of();

template <class T>
const StructTable& table_of();

/// The same checks, in effect, as Reader::get() for T: what that accepts, this accepts.
template <class T>
ValueOps make_ops() {
    ValueOps ops;
    ops.resolve = &the_field;
    if constexpr (std::is_same_v<T, std::string>) {
        ops.string = [](void* target, std::string_view text) {
            static_cast<std::string*>(target)->assign(text);
            return true;
        };
    } else if constexpr (std::is_same_v<T, bool>) {
        ops.boolean = [](void* target, bool flag) {
            *static_cast<bool*>(target) = flag;
            return true;
        };
    } else if constexpr (std::is_same_v<T, int>) {
        ops.integer = [](void* target, std::int64_t number) {
            if (number < std::numeric_limits<int>::min() ||
                number > std::numeric_limits<int>::max())
                return false;
            *static_cast<int*>(target) = static_cast<int>(number);
            return true;
        };
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        ops.integer = [](void* target, std::int64_t number) {
            *static_cast<std::int64_t*>(target) = number;
            return true;
        };
    } else if constexpr (std::is_same_v<T, double>) {
        ops.number = [](void* target, double number) {
            if (!std::isfinite(number)) return false;
            *static_cast<double*>(target) = number;
            return true;
        };
    } else if constexpr (std::is_same_v<T, Actor>) {
        ops.string = [](void* target, std::string_view text) {
            auto actor = parse_actor(text);
            if (!actor) return false;
            *static_cast<Actor*>(target) = std::move(*actor);
            return true;
        };
    } else if constexpr (std::is_enum_v<T>) {
        ops.string = [](void* target, std::string_view text) {
            const std::optional<T> parsed = parse<T>(text);
            if (!parsed) return false;
            *static_cast<T*>(target) = *parsed;
            return true;
        };
    } else if constexpr (is_optional<T>::value) {
        static_assert(!is_optional<typename T::value_type>::value,
                      "an optional optional is io.clearable(), not io.optional()");
        ops = make_ops<typename T::value_type>();
        ops.resolve = [](void* field) -> void* { return &static_cast<T*>(field)->emplace(); };
    } else if constexpr (is_vector<T>::value) {
        ops.element = &ops_of<typename T::value_type>();
        ops.clear = [](void* vector) { static_cast<T*>(vector)->clear(); };
        ops.append = [](void* vector) -> void* { return &static_cast<T*>(vector)->emplace_back(); };
    } else {
        ops.object = &table_of<T>();
    }
    return ops;
}

template <class T>
const ValueOps& ops_of() {
    static const ValueOps ops = make_ops<T>();
    return ops;
}

/// A timestamp string, into a UnixMillis (Time<UnixMillis> in describe()).
const ValueOps& time_ops() {
    static const ValueOps ops = [] {
        ValueOps built;
        built.resolve = &the_field;
        built.string = [](void* target, std::string_view text) {
            const auto ms = parse_timestamp(text);
            if (!ms) return false;
            *static_cast<UnixMillis*>(target) = *ms;
            return true;
        };
        return built;
    }();
    return ops;
}

/// Updated's requires/awaiting: `"none"` clears, a spelling sets (Reader::clearable).
const ValueOps& clearable_ops() {
    static const ValueOps ops = [] {
        ValueOps built;
        built.resolve = &the_field;
        built.string = [](void* target, std::string_view text) {
            auto& out = *static_cast<std::optional<std::optional<Awaiting>>*>(target);
            if (text == "none") {
                out.emplace(std::nullopt);
                return true;
            }
            const auto parsed = parse<Awaiting>(text);
            if (!parsed) return false;
            out.emplace().emplace(*parsed);
            return true;
        };
        return built;
    }();
    return ops;
}

/// The IO a describe() runs against to list a struct's fields. Events are read strictly, so
/// `required` is as required as `identity` (the lenient mode is for tickets only).
template <class S>
class TableBuilder {
public:
    TableBuilder(const S& sample, StructTable& table)
        : sample_(sample)
        , table_(table) {}

    template <class T>
    void identity(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), true);
    }

    template <class T>
    void required(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), true);
    }

    template <class T>
    void optional(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), false);
    }

    template <class T>
    void unless_default(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), false);
    }

    void identity(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), true);
    }

    void required(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), true);
    }

    void optional(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), false);
    }

    void unless_default(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), false);
    }

    void clearable(std::string_view name, std::optional<std::optional<Awaiting>>& field) {
        add(name, &field, clearable_ops(), false);
    }

private:
    void add(std::string_view name, const void* field, const ValueOps& ops, bool required) {
        constexpr std::size_t max_fields = 64;
        if (table_.fields.size() == max_fields)
            throw std::length_error{"direct decoder: more than 64 fields in one struct"};
        const auto* base = reinterpret_cast<const char*>(&sample_);
        const auto offset = static_cast<std::size_t>(static_cast<const char*>(field) - base);
        if (required) table_.required_mask |= std::uint64_t{1} << table_.fields.size();
        table_.fields.push_back(FieldSpec{name, offset, &ops});
    }

    const S& sample_;
    StructTable& table_;
};

template <class T>
const StructTable& table_of() {
    static const StructTable table = [] {
        StructTable built;
        T sample{};
        TableBuilder<T> builder{sample, built};
        describe(builder, sample);
        return built;
    }();
    return table;
}

template <std::size_t I>
void* emplace_payload(Payload& payload) {
    return &payload.emplace<I>();
}

template <std::size_t... I>
std::array<PayloadSpec, sizeof...(I)> make_payload_specs(std::index_sequence<I...> /*all*/) {
    return {PayloadSpec{std::variant_alternative_t<I, Payload>::type,
                        &emplace_payload<I>,
                        &table_of<std::variant_alternative_t<I, Payload>>()}...};
}

}  // namespace

const StructTable& envelope_table() {
    static const StructTable table = [] {
        StructTable built;
        Event sample;
        TableBuilder<Event> builder{sample, built};
        builder.identity("v", sample.v);
        builder.identity("seq", sample.seq);
        builder.identity("id", sample.id);
        builder.identity("at", Time{sample.at});
        builder.identity("by", sample.by);
        return built;
    }();
    return table;
}

const PayloadSpecs& payload_specs() {
    static const PayloadSpecs specs = [] {
        auto built = make_payload_specs(std::make_index_sequence<std::variant_size_v<Payload>>{});
        // The root object holds the envelope and the payload side by side: a payload field
        // named like an envelope field would be read twice by the document path.
        for (const auto& spec : built) {
            for (const auto& field : spec.table->fields) {
                std::size_t hint = 0;
                if (field.name == type_key || envelope_table().find(field.name, hint) >= 0)
                    throw std::logic_error{"direct decoder: a payload field shadows the envelope"};
            }
        }
        return built;
    }();
    return specs;
}

}  // namespace board::codec_detail::direct
