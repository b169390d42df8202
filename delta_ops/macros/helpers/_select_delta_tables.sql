{#-
  The tables an operation works on, chosen like dbt users think: model names, tags, a schema
  or a name pattern (`*` wildcard; in `schema`, else in the target schema). The union of what
  is given; at least one selector is required, and a model or tag the project does not have is
  an error. Only Delta tables are returned, each with its DESCRIBE DETAIL and its node (when a
  model of the project writes it); the others come back in `skipped` with the reason.
-#}
{% macro _select_delta_tables(operation, models=none, tags=none, schema=none, pattern=none) %}
  {%- do delta_ops._require_sparkdelta(operation) -%}
  {%- set model_names = delta_ops._as_list(models, operation ~ ' argument models') -%}
  {%- set tag_names = delta_ops._as_list(tags, operation ~ ' argument tags') -%}
  {%- if not (model_names or tag_names or schema or pattern) -%}
    {{ exceptions.raise_compiler_error(
        operation ~ ": choose the tables with models, tags, schema or pattern, e.g. "
        ~ "--args '{models: [fct_orders]}'.") }}
  {%- endif -%}
  {%- set names = delta_ops._names_of_nodes(operation, model_names, tag_names) -%}
  {%- if schema or pattern -%}
    {%- do names.extend(delta_ops._names_in_schema(operation, schema or target.schema, pattern or '*')) -%}
  {%- endif -%}
  {{ return(delta_ops._delta_tables(names | map('lower') | unique | sort)) }}
{% endmacro %}


{#- 'schema.table' of the nodes with the given names or tags; an unknown one is an error. -#}
{% macro _names_of_nodes(operation, model_names, tag_names) %}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed', 'snapshot']) | list -%}
  {%- set chosen = [] -%}
  {%- for name in model_names -%}
    {%- do safe_identifier(name, operation ~ ' model name') -%}
    {%- set matches = nodes | selectattr('name', 'equalto', name) | list -%}
    {%- if not matches -%}
      {{ exceptions.raise_compiler_error(
          operation ~ ": the project has no model, seed or snapshot named " ~ name ~ ".") }}
    {%- endif -%}
    {%- do chosen.extend(matches) -%}
  {%- endfor -%}
  {%- for tag in tag_names -%}
    {%- if tag is not string or not modules.re.fullmatch('[A-Za-z0-9_-]+', tag) -%}
      {{ exceptions.raise_compiler_error(
          "Invalid " ~ operation ~ " tag " ~ (tag | string | tojson)
          ~ ": use letters, digits, '_' and '-'.") }}
    {%- endif -%}
    {%- set matches = [] -%}
    {%- for node in nodes if tag in node.tags -%}{%- do matches.append(node) -%}{%- endfor -%}
    {%- if not matches -%}
      {{ exceptions.raise_compiler_error(
          operation ~ ": no model, seed or snapshot of the project has the tag " ~ tag ~ ".") }}
    {%- endif -%}
    {%- do chosen.extend(matches) -%}
  {%- endfor -%}
  {%- set names = [] -%}
  {%- for node in chosen if node.config.materialized != 'ephemeral' -%}
    {%- do names.append(delta_ops._table_name_of(node)) -%}
  {%- endfor -%}
  {{ return(names) }}
{% endmacro %}


{#- 'schema.table' of the tables of a schema whose name matches the pattern. -#}
{% macro _names_in_schema(operation, schema_name, name_pattern) %}
  {%- set quoted_schema = safe_identifier(schema_name, operation ~ ' schema') -%}
  {%- if name_pattern is not string or not modules.re.fullmatch('[A-Za-z0-9_*]+', name_pattern) -%}
    {{ exceptions.raise_compiler_error(
        "Invalid " ~ operation ~ " pattern " ~ (name_pattern | string | tojson)
        ~ ": use letters, digits, '_' and the wildcard '*'.") }}
  {%- endif -%}
  {%- set listing = delta_ops._try_sql('show tables in ' ~ quoted_schema) -%}
  {%- if listing.error -%}
    {{ exceptions.raise_compiler_error(
        operation ~ ": cannot list the tables of schema " ~ schema_name ~ ": " ~ listing.error) }}
  {%- endif -%}
  {%- set regex = '(?i)' ~ name_pattern.replace('*', '.*') -%}
  {%- set names = [] -%}
  {%- for row in listing.table.rows if modules.re.fullmatch(regex, row['tableName']) -%}
    {%- do names.append(schema_name ~ '.' ~ row['tableName']) -%}
  {%- endfor -%}
  {{ return(names) }}
{% endmacro %}


{#- {'tables': [...], 'skipped': [...]}: the Delta tables among `names`, with detail and node. -#}
{% macro _delta_tables(names) %}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed', 'snapshot']) | list -%}
  {%- set selection = {'tables': [], 'skipped': []} -%}
  {%- for name in names -%}
    {%- set relation = delta_ops.relation_from_name(name) -%}
    {%- set detail = describe_detail(relation, raise_on_error=false) -%}
    {%- set owners = nodes | selectattr('schema', 'equalto', relation.schema)
        | selectattr('alias', 'equalto', relation.identifier) | list -%}
    {%- if detail.error -%}
      {%- do selection.skipped.append({'name': name, 'note': 'a view, not a table'
          if 'EXPECT_TABLE_NOT_VIEW' in detail.error else ('does not exist (not built yet)'
          if 'TABLE_OR_VIEW_NOT_FOUND' in detail.error else detail.error)}) -%}
    {%- elif detail.format != 'delta' -%}
      {%- do selection.skipped.append(
          {'name': name, 'note': 'not a Delta table (format ' ~ detail.format ~ ')'}) -%}
    {%- else -%}
      {%- do selection.tables.append({'name': name, 'relation': relation, 'detail': detail,
          'node': owners[0] if owners else none}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(selection) }}
{% endmacro %}
