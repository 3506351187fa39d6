"""The pipeline layer: what every study shares (artifacts, device claims,
job plumbing, overhead report, captions and saving, tables, config rules).
It builds on the library and knows no study."""
