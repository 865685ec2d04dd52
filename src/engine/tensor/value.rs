//! A tensor's value: its shape and its elements, row-major; and the seeded
//! generator behind `randn`.

use super::Shape;

/// A value of rank ≤ 2: a shape and its elements in row-major order (row 0
/// first), float64. `data.len() == shape.len()` always.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    shape: Shape,
    data: Vec<f64>,
}

/// Rows of unequal length given to [`Tensor::from_rows`]: row `row` has
/// `got` elements where row 0 has `expected`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("row {row} has {got} element(s) but row 0 has {expected}: every row needs the same length")]
pub struct RaggedRows {
    /// The first row whose length differs from row 0's (0-based).
    pub row: usize,
    /// Row 0's length.
    pub expected: usize,
    /// That row's length.
    pub got: usize,
}

impl Tensor {
    /// A tensor of the given shape and row-major elements.
    ///
    /// # Panics
    /// If `data.len() != shape.len()` (a programmer error).
    pub fn new(shape: Shape, data: Vec<f64>) -> Tensor {
        assert_eq!(
            data.len(),
            shape.len(),
            "a tensor of shape {shape} holds {} elements",
            shape.len()
        );
        Tensor { shape, data }
    }

    /// The shape-`()` tensor holding `value`.
    pub fn scalar(value: f64) -> Tensor {
        Tensor::new(Shape::scalar(), vec![value])
    }

    /// A vector of the given elements.
    pub fn vector(data: Vec<f64>) -> Tensor {
        Tensor::new(Shape::vector(data.len()), data)
    }

    /// A tensor of `shape` filled with `value`. Allocates `shape.len()`
    /// numbers: check the memory budget first ([`TensorGraph::check_budget`](super::TensorGraph::check_budget)).
    pub fn full(shape: Shape, value: f64) -> Tensor {
        Tensor::new(shape, vec![value; shape.len()])
    }

    /// Zeros of `shape` (numpy's `zeros`).
    pub fn zeros(shape: Shape) -> Tensor {
        Tensor::full(shape, 0.0)
    }

    /// Ones of `shape` (numpy's `ones`).
    pub fn ones(shape: Shape) -> Tensor {
        Tensor::full(shape, 1.0)
    }

    /// The `n×n` identity matrix (numpy's `eye`).
    pub fn eye(n: usize) -> Tensor {
        let mut t = Tensor::zeros(Shape::matrix(n, n));
        for i in 0..n {
            t.data[i * n + i] = 1.0;
        }
        t
    }

    /// A matrix from its rows, in order: `[[1, 2, 0], [3, 4, 1]]` is `2×3`.
    /// No rows gives the `0×0` matrix.
    ///
    /// # Errors
    /// [`RaggedRows`] when a row's length differs from row 0's.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Tensor, RaggedRows> {
        let n = rows.first().map_or(0, Vec::len);
        if let Some((row, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != n) {
            return Err(RaggedRows {
                row,
                expected: n,
                got: r.len(),
            });
        }
        Ok(Tensor::new(Shape::matrix(rows.len(), n), rows.concat()))
    }

    /// Samples of the standard normal distribution in row-major order, from
    /// `rng` (numpy's `randn`, but [`Rng`]'s numbers, not numpy's): the
    /// same seed gives the same tensor on every machine.
    pub fn randn(shape: Shape, rng: &mut Rng) -> Tensor {
        Tensor::drawn(shape, &|| false, || rng.normal()).expect("never asked to stop")
    }

    /// A tensor of `shape` whose elements are `next()`, called once per
    /// element in row-major order, in blocks of 2²⁰ elements, asking `stop`
    /// before each but the first: `None` when it said stop (a large `randn`
    /// answers Ctrl-C within a block's time, some 30 ms). Drawn whole, the
    /// same numbers as one call per element without blocks.
    pub fn drawn(
        shape: Shape,
        stop: &dyn Fn() -> bool,
        mut next: impl FnMut() -> f64,
    ) -> Option<Tensor> {
        let n = shape.len();
        let mut data = Vec::with_capacity(n);
        while data.len() < n {
            if !data.is_empty() && stop() {
                return None;
            }
            let block = (n - data.len()).min(super::kernels::BLOCK_ELEMENTS);
            data.extend((0..block).map(|_| next()));
        }
        Some(Tensor::new(shape, data))
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The elements, row-major.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// The elements, row-major, to change in place (the shape stays).
    pub fn data_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// The elements, row-major, taking the tensor apart.
    pub fn into_data(self) -> Vec<f64> {
        self.data
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The element at `index` (one index per axis: `[]`, `[i]` or `[i, j]`);
    /// `None` when the indices do not fit the shape.
    pub fn get(&self, index: &[usize]) -> Option<f64> {
        let flat = match (self.shape.dims(), index) {
            ([], []) => 0,
            (&[n], &[i]) if i < n => i,
            (&[m, n], &[i, j]) if i < m && j < n => i * n + j,
            _ => return None,
        };
        Some(self.data[flat])
    }

    /// Row `i` of a matrix; `None` when the tensor is not a matrix or `i` is
    /// out of range.
    pub fn row(&self, i: usize) -> Option<&[f64]> {
        match *self.shape.dims() {
            [m, n] if i < m => Some(&self.data[i * n..(i + 1) * n]),
            _ => None,
        }
    }

    /// `self += other`, elementwise, for tensors of one shape (the
    /// accumulation of gradients at fan-out).
    ///
    /// # Panics
    /// If the shapes differ (a programmer error).
    pub fn add_assign(&mut self, other: &Tensor) {
        assert_eq!(self.shape, other.shape, "accumulating tensors of one shape");
        for (a, b) in self.data.iter_mut().zip(&other.data) {
            *a += b;
        }
    }
}

/// The pseudo-random generator behind `randn`: xoshiro256** (Blackman and
/// Vigna, "Scrambled linear pseudorandom number generators", 2021;
/// prng.di.unimi.it), its state seeded by SplitMix64 from one `u64` as its
/// authors recommend, and normal samples by the Box–Muller transform (Box and
/// Muller 1958), both of a pair kept, with `ln`, `cos`, `sin` and `sqrt` from
/// the `libm` crate so that every machine, the WebAssembly playground
/// included, gives the same numbers bit for bit.
#[derive(Debug, Clone, PartialEq)]
pub struct Rng {
    state: [u64; 4],
    /// The second sample of the last Box–Muller pair, not handed out yet.
    spare: Option<f64>,
}

impl Rng {
    /// A generator seeded with `seed`: its four words of state are the first
    /// four outputs of SplitMix64 started at `seed` (never all zero).
    pub fn new(seed: u64) -> Rng {
        let mut s = seed;
        let mut split_mix = || {
            // SplitMix64 (Steele, Lea and Flood 2014), as in Vigna's splitmix64.c.
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let state = [split_mix(), split_mix(), split_mix(), split_mix()];
        Rng { state, spare: None }
    }

    /// The next 64 random bits (xoshiro256**, as in Vigna's xoshiro256starstar.c).
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform sample of [0, 1): the top 53 bits over 2⁵³.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A sample of the standard normal distribution: Box–Muller, `r =
    /// √(−2·ln u₁)` with `u₁ = 1 − uniform()` in (0, 1], `θ = 2π·u₂`, giving
    /// `r·cos θ` now and `r·sin θ` next time.
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        let r = libm::sqrt(-2.0 * libm::log(u1));
        let theta = 2.0 * std::f64::consts::PI * u2;
        self.spare = Some(r * libm::sin(theta));
        r * libm::cos(theta)
    }
}
