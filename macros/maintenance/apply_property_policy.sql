{#-
  Bring the table properties of existing tables in line with their models' `tblproperties`
  config. A dry run by default (it lists what would change): enabling a feature through a
  property upgrades the table protocol, which cannot be undone. `dry_run: false` applies.
  Properties set on a table but absent from its model are left alone.
-#}
{% macro apply_property_policy(models=none, tags=none, schema=none, pattern=none, dry_run=true) %}
  {{ return(adapter.dispatch('apply_property_policy', 'lakehouse')(models, tags, schema, pattern, dry_run)) }}
{% endmacro %}

{% macro default__apply_property_policy(models, tags, schema, pattern, dry_run) %}
  {%- if dry_run is not boolean -%}
    {{ exceptions.raise_compiler_error(
        "Invalid apply_property_policy dry_run " ~ (dry_run | string | tojson) ~ ": give true or false.") }}
  {%- endif -%}
  {%- set selection = _select_delta_tables('apply_property_policy', models, tags, schema, pattern) -%}
  {{ return(_run_for_each_table('apply_property_policy' ~ (' (dry run)' if dry_run else ''),
      selection, _apply_property_policy_table, {'dry_run': dry_run})) }}
{% endmacro %}

{#- {key: wanted value} for the properties of `wanted` that differ from `current`. -#}
{% macro _property_changes(wanted, current) %}
  {%- set changes = {} -%}
  {%- for key, value in (wanted or {}).items() -%}
    {%- set text = (value | string | lower) if value is boolean else (value | string) -%}
    {%- if current.get(key) is none or current.get(key) | string | lower != text | lower -%}
      {%- do changes.update({key: text}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(changes) }}
{% endmacro %}

{% macro _apply_property_policy_table(table, options) %}
  {%- if table.node is none -%}
    {{ return({'status': 'ok', 'note': 'no model of the project writes this table; left alone'}) }}
  {%- endif -%}
  {%- set changes = _property_changes(table.node.config.get('tblproperties'), table.detail.properties) -%}
  {%- if not changes -%}{{ return({'status': 'ok', 'note': 'properties match the model'}) }}{%- endif -%}
  {%- set listed = [] -%}
  {%- for key, value in changes.items() -%}
    {%- do listed.append(key ~ '=' ~ value ~ ' (was ' ~ table.detail.properties.get(key, 'unset') ~ ')') -%}
  {%- endfor -%}
  {%- set sql = lakehouse.get_set_tblproperties_sql(table.relation, changes) -%}
  {%- if options.dry_run -%}
    {{ return({'status': 'dry run', 'note': 'would set ' ~ listed | join(', ')}) }}
  {%- endif -%}
  {%- set result = _try_sql(sql) -%}
  {%- if result.error -%}{{ return(_failed(result.error)) }}{%- endif -%}
  {{ return({'status': 'ok', 'note': 'set ' ~ listed | join(', ')}) }}
{% endmacro %}
