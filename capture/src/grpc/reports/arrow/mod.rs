//! The reports Parca answers as Apache Arrow IPC streams (one record batch, LZ4 frame
//! compressed, as arrow-go's `ipc.NewWriter(…, ipc.WithLZ4())` writes them):
//! FLAMEGRAPH_ARROW and FLAMECHART ([`flamegraph`], over a [`tree`]), TABLE_ARROW ([`table`]) and the
//! SOURCE record ([`source`]); and the column builders they share.
//!
//! - String columns are dictionaries of the strings the rows use, in the order first
//!   used (Parca compacts its dictionaries the same way; the order is not part of the
//!   answer).
//! - Integer columns Parca narrows are the smallest unsigned (or signed) type that
//!   holds their largest value, with Parca's bounds (a value equal to the type's
//!   maximum takes the next type).
//! - A column is declared nullable when it holds a null (arrow-go writes such columns
//!   as not nullable; readers look at the validity buffers either way).

pub(super) mod flamegraph;
pub(super) mod source;
pub(super) mod table;
mod tree;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::types::ArrowDictionaryKeyType;
use arrow_array::{
    ArrayRef, BinaryArray, DictionaryArray, Int8Array, Int16Array, Int32Array, Int64Array,
    PrimitiveArray, RecordBatch, StringArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use arrow_ipc::CompressionType;
use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_schema::{ArrowError, Field, Schema};
use profile_model::profile::StrId;
use tonic::Status;

/// `columns` (name, array) as one LZ4-compressed Arrow IPC stream.
pub(super) fn ipc(columns: Vec<(String, ArrayRef)>) -> Result<Vec<u8>, Status> {
    let fields: Vec<Field> = (columns.iter())
        .map(|(name, array)| Field::new(name, array.data_type().clone(), array.null_count() > 0))
        .collect();
    let arrays = columns.into_iter().map(|(_, array)| array).collect();
    let written = (|| -> Result<Vec<u8>, ArrowError> {
        let schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(schema.clone(), arrays)?;
        let options =
            IpcWriteOptions::default().try_with_compression(Some(CompressionType::LZ4_FRAME))?;
        let mut writer = StreamWriter::try_new_with_options(Vec::new(), &schema, options)?;
        writer.write(&batch)?;
        writer.finish()?;
        writer.into_inner()
    })();
    written.map_err(|e| Status::internal(format!("could not write the Arrow record: {e}")))
}

/// A string column as a dictionary: each row's string (a profile string id, `None`
/// for null) and the strings used so far.
#[derive(Debug, Default)]
pub(super) struct StringColumn {
    keys: Vec<Option<u32>>,
    index: HashMap<StrId, u32>,
    values: Vec<StrId>,
}

impl StringColumn {
    /// Appends a row holding `string` (`None`: null).
    pub(super) fn push(&mut self, string: Option<StrId>) {
        let key = string.map(|s| {
            let next = self.values.len() as u32;
            *self.index.entry(s).or_insert_with(|| {
                self.values.push(s);
                next
            })
        });
        self.keys.push(key);
    }

    /// The column with Int32 keys over Binary values, as Parca's flame graph has them.
    pub(super) fn binary(&self, strings: &[String]) -> Result<ArrayRef, Status> {
        let values = BinaryArray::from_iter_values(
            (self.values.iter()).map(|&s| text(strings, s).as_bytes()),
        );
        let keys = Int32Array::from_iter(self.keys.iter().map(|k| k.map(|k| k as i32)));
        dictionary(keys, Arc::new(values))
    }

    /// The column with `K` keys over Utf8 values, as Parca's table and source have them.
    pub(super) fn utf8<K: ArrowDictionaryKeyType>(
        &self,
        strings: &[String],
    ) -> Result<ArrayRef, Status>
    where
        K::Native: TryFrom<u32>,
    {
        let values = StringArray::from_iter_values(self.values.iter().map(|&s| text(strings, s)));
        let keys: PrimitiveArray<K> = (self.keys.iter())
            .map(|k| k.and_then(|k| K::Native::try_from(k).ok()))
            .collect();
        dictionary(keys, Arc::new(values))
    }
}

/// A dictionary array of `keys` over `values`.
fn dictionary<K: ArrowDictionaryKeyType>(
    keys: PrimitiveArray<K>,
    values: ArrayRef,
) -> Result<ArrayRef, Status> {
    DictionaryArray::<K>::try_new(keys, values)
        .map(|array| Arc::new(array) as ArrayRef)
        .map_err(|e| Status::internal(format!("could not make a dictionary column: {e}")))
}

/// Profile string `id`, empty when out of range.
fn text(strings: &[String], id: StrId) -> &str {
    strings.get(id as usize).map_or("", String::as_str)
}

/// `values` in the smallest unsigned type that holds `largest` (Parca's
/// `smallestUnsignedTypeFor`): UInt8 below 255, UInt16 below 65,535, and so on.
pub(super) fn smallest_unsigned(values: &[Option<u64>], largest: u64) -> ArrayRef {
    let it = values.iter().copied();
    if largest < u64::from(u8::MAX) {
        Arc::new(UInt8Array::from_iter(it.map(|v| v.map(|v| v as u8))))
    } else if largest < u64::from(u16::MAX) {
        Arc::new(UInt16Array::from_iter(it.map(|v| v.map(|v| v as u16))))
    } else if largest < u64::from(u32::MAX) {
        Arc::new(UInt32Array::from_iter(it.map(|v| v.map(|v| v as u32))))
    } else {
        Arc::new(UInt64Array::from_iter(it))
    }
}

/// `values` in the smallest signed type that holds all of them (Parca's
/// `smallestSignedTypeFor`, over the true smallest value).
pub(super) fn smallest_signed(values: &[i64]) -> ArrayRef {
    let (min, max) = (values.iter()).fold((0, 0), |(lo, hi), &v| (v.min(lo), v.max(hi)));
    let it = values.iter().copied();
    if max < i64::from(i8::MAX) && min > i64::from(i8::MIN) {
        Arc::new(Int8Array::from_iter_values(it.map(|v| v as i8)))
    } else if max < i64::from(i16::MAX) && min > i64::from(i16::MIN) {
        Arc::new(Int16Array::from_iter_values(it.map(|v| v as i16)))
    } else if max < i64::from(i32::MAX) && min > i64::from(i32::MIN) {
        Arc::new(Int32Array::from_iter_values(it.map(|v| v as i32)))
    } else {
        Arc::new(Int64Array::from_iter_values(it))
    }
}

#[cfg(test)]
pub(super) mod read {
    //! Reading the records back, for the reports' tests.

    use arrow_array::cast::AsArray;
    use arrow_array::{Array, RecordBatch};
    use arrow_ipc::reader::StreamReader;

    /// The one record batch of an IPC stream.
    pub(crate) fn batch(bytes: &[u8]) -> RecordBatch {
        let mut reader = StreamReader::try_new(bytes, None).expect("an IPC stream");
        let batch = reader.next().expect("one batch").expect("a valid batch");
        assert!(reader.next().is_none(), "only one batch");
        batch
    }

    /// Column `name` as u64s (any integer type; null: `None`).
    pub(crate) fn numbers(batch: &RecordBatch, name: &str) -> Vec<Option<i128>> {
        let column = batch.column_by_name(name).expect("the column");
        let cast = arrow_cast_i128(column.as_ref());
        (0..column.len())
            .map(|i| column.is_valid(i).then(|| cast(i)))
            .collect()
    }

    fn arrow_cast_i128(array: &dyn Array) -> Box<dyn Fn(usize) -> i128 + '_> {
        use arrow_array::types::*;
        macro_rules! as_i128 {
            ($($t:ty),*) => {$(
                if let Some(a) = array.as_primitive_opt::<$t>() {
                    return Box::new(move |i| i128::from(a.value(i)));
                }
            )*};
        }
        as_i128!(
            Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
            UInt64Type
        );
        panic!("not an integer column: {:?}", array.data_type())
    }

    /// Column `name` (a dictionary of strings or binaries) as strings.
    pub(crate) fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
        let column = batch.column_by_name(name).expect("the column");
        let dict = column.as_any_dictionary();
        let keys = dict.normalized_keys();
        let values = dict.values();
        (0..column.len())
            .map(|i| {
                column.is_valid(i).then(|| {
                    let v = values.slice(keys[i], 1);
                    match v.as_binary_opt::<i32>() {
                        Some(b) => String::from_utf8_lossy(b.value(0)).into_owned(),
                        None => v.as_string::<i32>().value(0).to_string(),
                    }
                })
            })
            .collect()
    }

    /// Column `name` (a list of integers) as vectors.
    pub(crate) fn lists(batch: &RecordBatch, name: &str) -> Vec<Option<Vec<i128>>> {
        let column = batch.column_by_name(name).expect("the column");
        let list = column.as_list::<i32>();
        (0..column.len())
            .map(|i| {
                list.is_valid(i).then(|| {
                    let values = list.value(i);
                    let cast = arrow_cast_i128(values.as_ref());
                    (0..values.len()).map(cast).collect()
                })
            })
            .collect()
    }

    /// Column `name` as booleans.
    pub(crate) fn booleans(batch: &RecordBatch, name: &str) -> Vec<Option<bool>> {
        let column = batch.column_by_name(name).expect("the column");
        let b = column.as_boolean();
        (0..column.len())
            .map(|i| b.is_valid(i).then(|| b.value(i)))
            .collect()
    }
}
