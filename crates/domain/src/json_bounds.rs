//! How much a JSON text may hold before it is parsed. A parsed value takes tens of bytes for each
//! item however short its text: `[0,0,0,…]` of 16 MiB becomes gigabytes in memory. Counting the
//! items first, on the bytes, bounds what parsing can cost.

/// The most items (values, and keys of objects) a JSON request body or provider event may hold:
/// far above what any request of the API or event of a provider carries.
pub const MAX_JSON_ITEMS: usize = 20_000;

/// Whether the JSON text `bytes` holds at most `max` items, counted without parsing as its
/// separators and openings outside strings: every item after the first of its array or object
/// follows a comma, every array or object opens with a bracket. Not a validation: malformed
/// text is counted the same way, and left to the parser to refuse.
pub fn json_items_within(bytes: &[u8], max: usize) -> bool {
    let mut items = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b'[' | b'{' | b':' => {
                items += 1;
                if items > max {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn items_are_counted_outside_strings_only() {
        assert!(json_items_within(b"[0,0,0]", 4));
        assert!(!json_items_within(b"[0,0,0]", 3));
        assert!(json_items_within(br#"{"a":1}"#, 3));
        assert!(!json_items_within(br#"{"a":1,"b":[2]}"#, 5));
        let quoted = br#"{"text":"a,b,c:[{,\",,\\"}"#;
        assert!(json_items_within(quoted, 3), "commas in a string are text");
        assert!(json_items_within(b"", 1));
    }

    proptest! {
        #[test]
        fn an_array_or_object_of_n_entries_counts_each_of_its_items(
            entries in proptest::collection::vec(any::<u32>(), 0..200),
            keyed in any::<bool>(),
        ) {
            let (text, per_entry) = match keyed {
                true => {
                    let pairs: Vec<String> =
                        entries.iter().map(|n| format!("\"k,{n}:\":{n}")).collect();
                    (format!("{{{}}}", pairs.join(",")), 2)
                }
                false => {
                    let values: Vec<String> = entries.iter().map(u32::to_string).collect();
                    (format!("[{}]", values.join(",")), 1)
                }
            };
            let items = entries.len() * per_entry;
            prop_assert!(json_items_within(text.as_bytes(), items + 2));
            prop_assert!(entries.is_empty() || !json_items_within(text.as_bytes(), items));
        }
    }
}
