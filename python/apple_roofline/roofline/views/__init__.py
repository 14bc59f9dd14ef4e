"""The views of a run: the roofline figure (its axes, labels, drawing and interactive form, Plotly
embedding), the HTML page, the Markdown and CSV report, the report's tables and clock table, and
the files a run writes. Every view takes a run or a model; nothing below imports a view."""
