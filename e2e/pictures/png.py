"""The PNG of a figure, sized for the HTML report that embeds every picture of a run.

Drawn at :data:`DPI` (a 12-inch figure is ~960 px wide: the report's column on a laptop, shown
without scaling, 8-point labels still sharp) and stored with a palette of the :data:`COLOURS`
colours that cover the most pixels: every flat colour of a plot (fills, lines, legend swatches)
stays exact, only the rarest anti-aliasing shades take the nearest colour of the palette — the
same picture to the eye, at about a third of the bytes of full colour.
"""

from __future__ import annotations

import io
from typing import cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from PIL import Image

DPI = 80
COLOURS = 256


def png(fig: Figure, tight: bool = True) -> bytes:
    """``fig`` as PNG bytes (see module doc); the figure is closed. ``tight``: cropped to what is
    drawn (a second drawing pass); False: the figure as sized, for one whose margins are set."""
    drawn = io.BytesIO()
    try:
        fig.savefig(drawn, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    finally:
        plt.close(fig)
    image = Image.open(drawn).convert("RGB")
    counted = cast("list[tuple[int, tuple[int, int, int]]]", image.getcolors(maxcolors=image.width * image.height))
    common = [rgb for _, rgb in sorted(counted, key=lambda c: c[0], reverse=True)[:COLOURS]]
    palette = Image.new("P", (1, 1))
    palette.putpalette([v for rgb in common for v in rgb])
    out = io.BytesIO()
    image.quantize(palette=palette, dither=Image.Dither.NONE).save(out, format="PNG", optimize=True)
    return out.getvalue()
