"""The roofline model, below the run and the views: the model itself (ceilings, ridge points,
attainable rates), a run as a results file, the roofs and which one binds a point, the physical
limits, efficiency, which ceilings the figure shows, and the ceilings' names.

Methodology: Williams, Waterman and Patterson 2009 (docs/design/model.md, "The roofline model and its views").
"""
