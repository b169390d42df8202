{#- enable_table_feature (protocol upgraded; enabling it again is a no-op), then
    drop_table_feature: a dry run by default, then dropped. -#}
{% macro check_table_features(checks, scratch) %}
  {%- set events = scratch ~ '.events' -%}
  {%- set selected = {'feature': 'v2Checkpoint', 'schema': scratch, 'pattern': 'events'} -%}
  {%- set before = _detail_of(events) -%}
  {%- do _expect(checks, 'v2Checkpoint' not in before.tableFeatures, "events starts without v2Checkpoint", before.tableFeatures) -%}

  {%- do delta_ops.enable_table_feature(**selected) -%}
  {%- set after = _detail_of(events) -%}
  {%- set version = _history_of(events)[0].version -%}
  {%- do _expect(checks, 'v2Checkpoint' in after.tableFeatures and after.minReaderVersion == 3 and after.minWriterVersion == 7
      and _properties_of(events).get('delta.feature.v2checkpoint', _properties_of(events).get('delta.feature.v2Checkpoint')) == 'supported',
      "enable_table_feature v2Checkpoint: a feature of events, protocol reader 3 / writer 7",
      after.tableFeatures ~ ', reader ' ~ after.minReaderVersion ~ ', writer ' ~ after.minWriterVersion) -%}
  {%- set results = delta_ops.enable_table_feature(**selected) -%}
  {%- do _expect(checks, results[0].note == 'v2Checkpoint already enabled' and _history_of(events)[0].version == version,
      "enable_table_feature again: already enabled, committed nothing", results) -%}

  {%- set results = delta_ops.drop_table_feature(**selected) -%}
  {%- do _expect(checks, results[0].status == 'dry run' and 'v2Checkpoint' in _detail_of(events).tableFeatures
      and _history_of(events)[0].version == version,
      "drop_table_feature is a dry run by default: v2Checkpoint stays, nothing committed", results) -%}
  {%- do delta_ops.drop_table_feature(dry_run=false, **selected) -%}
  {%- set features = _detail_of(events).tableFeatures -%}
  {%- set operations = _history_of(events) | selectattr('version', 'gt', version) | map(attribute='operation') | list -%}
  {%- do _expect(checks, 'v2Checkpoint' not in features and 'DROP FEATURE' in operations and _count_rows(events) == 6,
      "drop_table_feature dry_run false: v2Checkpoint dropped (DROP FEATURE committed), 6 rows",
      features ~ ', ' ~ operations) -%}
{% endmacro %}
