{#-
  Private helpers shared by the maintenance, clone and restore operations: table selection,
  DESCRIBE DETAIL as a dict, the "i of n" loop with timings, the summary and the final failure.
-#}

{#- A list argument given as a list or as one comma-separated string; names the argument. -#}
{% macro _as_list(value, what) %}
  {%- if value is none -%}
    {{ return([]) }}
  {%- elif value is string -%}
    {{ return(value.split(',') | map('trim') | reject('equalto', '') | list) }}
  {%- elif value is iterable and value is not mapping -%}
    {{ return(value | list) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error(
      "Invalid " ~ what ~ " " ~ (value | string | tojson) ~ ": give a list of names.") }}
{% endmacro %}

{#- Run one statement; {'table': agate table} or {'error': message} (see adapter.try_execute). -#}
{% macro _try_sql(sql) %}
  {{ log('lakehouse sql: ' ~ sql, info=False) }}
  {{ return(adapter.try_execute(sql)) }}
{% endmacro %}

{% macro _rows_as_dicts(table) %}
  {%- set rows = [] -%}
  {%- for row in table.rows -%}
    {%- do rows.append(dict(zip(table.column_names, row.values()))) -%}
  {%- endfor -%}
  {{ return(rows) }}
{% endmacro %}

{#- Complex columns arrive as JSON text (Thrift and dbt's agate tables alike). -#}
{% macro _json_value(value, default) %}
  {%- if value is none -%}{{ return(default) }}{%- endif -%}
  {%- if value is string -%}{{ return(fromjson(value, default)) }}{%- endif -%}
  {{ return(value) }}
{% endmacro %}

{#- DESCRIBE DETAIL of a relation as a dict, or {'error': message}. -#}
{% macro _describe_detail(relation) %}
  {%- set result = _try_sql('describe detail ' ~ relation) -%}
  {%- if result.error -%}{{ return({'error': result.error}) }}{%- endif -%}
  {%- set detail = _rows_as_dicts(result.table)[0] -%}
  {%- for key in ['partitionColumns', 'clusteringColumns', 'tableFeatures'] -%}
    {%- do detail.update({key: _json_value(detail.get(key), [])}) -%}
  {%- endfor -%}
  {%- do detail.update({'properties': _json_value(detail.get('properties'), {})}) -%}
  {{ return(detail) }}
{% endmacro %}

{#- Relation of a model, seed or snapshot node, or none for ephemeral nodes. -#}
{% macro _node_relation(node) %}
  {%- if node.config.materialized == 'ephemeral' -%}{{ return(none) }}{%- endif -%}
  {{ return(lakehouse.relation_from_name(node.schema ~ '.' ~ (node.alias or node.name))) }}
{% endmacro %}

{#-
  The tables an operation works on, chosen like dbt users think: model names, tags, a schema
  or a name pattern (`*` wildcard; in `schema`, else in the target schema). The union of what
  is given; at least one selector is required. Only Delta tables are returned; the others
  come back in `skipped` with the reason.
-#}
{% macro _select_delta_tables(operation, models=none, tags=none, schema=none, pattern=none) %}
  {%- set model_names = _as_list(models, operation ~ ' argument models') -%}
  {%- set tag_names = _as_list(tags, operation ~ ' argument tags') -%}
  {%- if not (model_names or tag_names or schema or pattern) -%}
    {{ exceptions.raise_compiler_error(
        operation ~ ": choose the tables with models, tags, schema or pattern, e.g. "
        ~ "--args '{models: [fct_orders]}'.") }}
  {%- endif -%}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed', 'snapshot']) | list -%}
  {%- set names = [] -%}
  {%- for name in model_names -%}
    {%- do lakehouse.safe_identifier(name, operation ~ ' model name') -%}
    {%- set matches = nodes | selectattr('name', 'equalto', name) | list -%}
    {%- if not matches -%}
      {{ exceptions.raise_compiler_error(
          operation ~ ": the project has no model, seed or snapshot named " ~ name ~ ".") }}
    {%- endif -%}
    {%- for node in matches if _node_relation(node) is not none -%}
      {%- do names.append(node.schema ~ '.' ~ (node.alias or node.name)) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for tag in tag_names -%}
    {%- if tag is not string or not modules.re.fullmatch('[A-Za-z0-9_-]+', tag) -%}
      {{ exceptions.raise_compiler_error(
          "Invalid " ~ operation ~ " tag " ~ (tag | string | tojson)
          ~ ": use letters, digits, '_' and '-'.") }}
    {%- endif -%}
    {%- for node in nodes if tag in node.tags and _node_relation(node) is not none -%}
      {%- do names.append(node.schema ~ '.' ~ (node.alias or node.name)) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if schema or pattern -%}
    {%- set schema_name = schema or target.schema -%}
    {%- set quoted_schema = lakehouse.safe_identifier(schema_name, operation ~ ' schema') -%}
    {%- set name_pattern = pattern or '*' -%}
    {%- if name_pattern is not string or not modules.re.fullmatch('[A-Za-z0-9_*]+', name_pattern) -%}
      {{ exceptions.raise_compiler_error(
          "Invalid " ~ operation ~ " pattern " ~ (name_pattern | string | tojson)
          ~ ": use letters, digits, '_' and the wildcard '*'.") }}
    {%- endif -%}
    {%- set listing = _try_sql('show tables in ' ~ quoted_schema) -%}
    {%- if listing.error -%}
      {{ exceptions.raise_compiler_error(
          operation ~ ": cannot list the tables of schema " ~ schema_name ~ ": " ~ listing.error) }}
    {%- endif -%}
    {%- set regex = '(?i)' ~ name_pattern.replace('*', '.*') -%}
    {%- for row in listing.table.rows if modules.re.fullmatch(regex, row['tableName']) -%}
      {%- do names.append(schema_name ~ '.' ~ row['tableName']) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set selection = {'tables': [], 'skipped': []} -%}
  {%- for name in names | map('lower') | unique | sort -%}
    {%- set relation = lakehouse.relation_from_name(name) -%}
    {%- set detail = _describe_detail(relation) -%}
    {%- set owners = nodes | selectattr('schema', 'equalto', relation.schema)
        | selectattr('alias', 'equalto', relation.identifier) | list -%}
    {%- set node = owners[0] if owners else none -%}
    {%- if detail.error -%}
      {%- do selection.skipped.append({'name': name, 'note': 'a view, not a table'
          if 'EXPECT_TABLE_NOT_VIEW' in detail.error else detail.error}) -%}
    {%- elif detail.format != 'delta' -%}
      {%- do selection.skipped.append(
          {'name': name, 'note': 'not a Delta table (format ' ~ detail.format ~ ')'}) -%}
    {%- else -%}
      {%- do selection.tables.append(
          {'name': name, 'relation': relation, 'detail': detail, 'node': node}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(selection) }}
{% endmacro %}

{#-
  Run `step(table, options)` on every selected table, with "i of n" progress and timings; a
  failed table does not stop the others. Ends with a summary table and, when any table
  failed, an error listing the failures (dbt exits non-zero). `step` returns
  {'status': 'ok' | 'dry run' | 'failed', 'note': text}.
-#}
{% macro _run_for_each_table(operation, selection, step, options={}) %}
  {%- set total = selection.tables | length -%}
  {%- for skipped in selection.skipped -%}
    {{ log(operation ~ ": skipped " ~ skipped.name ~ ": " ~ skipped.note, info=True) }}
  {%- endfor -%}
  {%- if total == 0 -%}
    {{ log(operation ~ ": no Delta table selected; nothing to do.", info=True) }}
  {%- endif -%}
  {%- set results = [] -%}
  {%- for table in selection.tables -%}
    {%- set started = modules.datetime.datetime.now() -%}
    {{ log(operation ~ ": " ~ loop.index ~ " of " ~ total ~ " " ~ table.name ~ " ...", info=True) }}
    {%- set outcome = step(table, options) -%}
    {%- set seconds = (modules.datetime.datetime.now() - started).total_seconds() -%}
    {{ log(operation ~ ": " ~ loop.index ~ " of " ~ total ~ " " ~ table.name ~ " "
        ~ outcome.status ~ " in " ~ '%.1f' | format(seconds) ~ "s: " ~ outcome.note, info=True) }}
    {%- do results.append({'name': table.name, 'status': outcome.status,
        'seconds': seconds, 'note': outcome.note}) -%}
  {%- endfor -%}
  {%- for skipped in selection.skipped -%}
    {%- do results.append({'name': skipped.name, 'status': 'skipped', 'seconds': 0,
        'note': skipped.note}) -%}
  {%- endfor -%}
  {%- set width = [results | map(attribute='name') | map('length') | max if results else 5, 5] | max -%}
  {{ log(operation ~ " summary:", info=True) }}
  {{ log("  " ~ 'table'.ljust(width) ~ "  " ~ 'status'.ljust(8) ~ "  seconds  note", info=True) }}
  {%- for result in results -%}
    {{ log("  " ~ result.name.ljust(width) ~ "  " ~ result.status.ljust(8) ~ "  "
        ~ ('%7.1f' | format(result.seconds)) ~ "  " ~ result.note, info=True) }}
  {%- endfor -%}
  {%- set failed = results | selectattr('status', 'equalto', 'failed') | list -%}
  {%- if failed -%}
    {%- set lines = [] -%}
    {%- for result in failed -%}{%- do lines.append(result.name ~ ': ' ~ result.note) -%}{%- endfor -%}
    {{ exceptions.raise_compiler_error(
        operation ~ ": " ~ failed | length ~ " of " ~ total ~ " tables failed: " ~ lines | join('; ')) }}
  {%- endif -%}
  {{ return(results) }}
{% endmacro %}

{% macro _failed(note) %}{{ return({'status': 'failed', 'note': note}) }}{% endmacro %}
