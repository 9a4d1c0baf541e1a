//! Splices the planned insertions into the original bytes in one pass.

use crate::StubStyle;
use crate::analyze::{Piece, Plan};
use crate::stub;

/// `ids[i]` is the block id of `plan.blocks[i]`.
pub(crate) fn render(source: &[u8], plan: &mut Plan, ids: &[u32], style: StubStyle) -> Vec<u8> {
    plan.insertions
        .sort_unstable_by_key(|i| (i.offset, i.order));
    let mut out = Vec::with_capacity(source.len() + plan.insertions.len() * 48);
    let mut copied = 0;
    for insertion in &plan.insertions {
        out.extend_from_slice(&source[copied..insertion.offset]);
        copied = insertion.offset;
        match insertion.piece {
            Piece::Counter { block } => stub::counter(&mut out, style, ids[block]),
            Piece::CounterAfterBareStatement { block } => {
                out.push(b';');
                stub::counter(&mut out, style, ids[block]);
            }
            Piece::OpenBrace { block } => {
                out.push(b'{');
                stub::counter(&mut out, style, ids[block]);
                out.push(b' ');
            }
            Piece::CloseBrace { semicolon } => {
                out.extend_from_slice(if semicolon { b"; }" } else { b" }" })
            }
            Piece::WrapOpen {
                block,
                wrapper,
                parenthesize,
            } => {
                stub::wrapper_open(&mut out, style, wrapper, ids[block]);
                if parenthesize {
                    out.push(b'(');
                }
            }
            Piece::WrapClose { parenthesize } => {
                out.extend_from_slice(if parenthesize { b"))" } else { b")" })
            }
        }
    }
    out.extend_from_slice(&source[copied..]);
    out
}
