//! Frame colors: stable across runs and machines (FNV-1a, never std's randomized
//! hasher), grouped by package so related frames share a hue, with a small per-function
//! variation so neighbours stay distinguishable. Pastel tones tuned for both themes.

use egui::Color32;
use profile_model::frames::{Frame, package_of};

/// What decides the hue of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorMode {
    /// Hue from the package (module) of the function.
    #[default]
    Package,
    /// Hue from the binary (mapping) the frame comes from.
    Binary,
}

/// 64-bit FNV-1a: tiny, stable, good enough to spread names over hues.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// HSL (hue in degrees, saturation and lightness in 0..=1) to sRGB.
pub fn hsl(hue: f32, saturation: f32, lightness: f32) -> Color32 {
    let c = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let h = hue.rem_euclid(360.0) / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = lightness - c / 2.0;
    let to_u8 = |v: f32| ((v + m).clamp(0.0, 1.0) * 255.0).round() as u8;
    Color32::from_rgb(to_u8(r), to_u8(g), to_u8(b))
}

/// A value in `0..1` from some bits of a hash.
fn unit(hash: u64, shift: u32) -> f32 {
    ((hash >> shift) & 0xffff) as f32 / 65535.0
}

/// The color of one frame.
pub fn frame_color(frame: &Frame, mode: ColorMode, dark: bool) -> Color32 {
    let key = match mode {
        ColorMode::Package => package_of(&frame.function),
        ColorMode::Binary => frame.binary.rsplit('/').next().unwrap_or(&frame.binary),
    };
    let group = fnv1a(key.as_bytes());
    let own = fnv1a(frame.function.as_bytes());
    // Spread groups over the hue circle; a golden-ratio step keeps close hashes apart.
    let hue = (unit(group, 0) * 360.0 + unit(group, 16) * 137.5) % 360.0;
    let hue = hue + (unit(own, 0) - 0.5) * 12.0;
    let (s_base, l_base) = if dark { (0.42, 0.62) } else { (0.62, 0.74) };
    let saturation = s_base + (unit(own, 16) - 0.5) * 0.16;
    let lightness = l_base + (unit(own, 32) - 0.5) * 0.08;
    hsl(hue, saturation, lightness)
}

/// The color of every frame of a table, indexed by frame id.
pub fn frame_colors(frames: &[Frame], mode: ColorMode, dark: bool) -> Vec<Color32> {
    frames.iter().map(|f| frame_color(f, mode, dark)).collect()
}

/// The neutral tone of the root ("all") rectangle.
pub fn root_color(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(0x6a, 0x6e, 0x76)
    } else {
        Color32::from_rgb(0xc9, 0xcc, 0xd2)
    }
}

/// The neutral tone of slivers (children narrower than one pixel).
pub fn sliver_color(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(0x4a, 0x4c, 0x50)
    } else {
        Color32::from_rgb(0xb4, 0xb6, 0xba)
    }
}

/// Relative luminance in 0..=1 (sRGB approximation, good enough to pick a text color).
pub fn luminance(c: Color32) -> f32 {
    (0.2126 * f32::from(c.r()) + 0.7152 * f32::from(c.g()) + 0.0722 * f32::from(c.b())) / 255.0
}

/// Dark or light text, whichever contrasts with `fill`.
pub fn text_on(fill: Color32) -> Color32 {
    if luminance(fill) > 0.5 {
        Color32::from_rgb(0x16, 0x18, 0x1c)
    } else {
        Color32::from_rgb(0xf2, 0xf2, 0xf2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn same_package_close_hues() {
        let f = |name: &str| Frame {
            name: name.into(),
            function: name.into(),
            ..Frame::default()
        };
        let a = frame_color(&f("main.fib"), ColorMode::Package, false);
        let b = frame_color(&f("main.hashLoop"), ColorMode::Package, false);
        let diff = |x: u8, y: u8| (i32::from(x) - i32::from(y)).abs();
        assert!(diff(a.r(), b.r()) < 60 && diff(a.g(), b.g()) < 60 && diff(a.b(), b.b()) < 60);
        assert_eq!(text_on(a), text_on(b));
    }
}
