{#-
  A keyed data diff of relation `a` (before: production) with relation `b` (after: yours), or,
  with only `a` and a `version` or `timestamp`, of that earlier Delta version of `a` (before)
  with `a` now, or with `a` as of `version_b` / `timestamp_b` (after): "what did the last run
  change". `a` and `b` are model, seed or snapshot names of the project or 'schema.table'
  names. The key: `key`, else the model's unique_key config, else its contract's primary_key
  constraint, else the columns of its one unique test.

  Logs one summary (rows removed, added, changed, unchanged; per column how many matched rows
  changed, their share, and audit-helper's breakdown: match, both NULL, one NULL, differ; the
  totals of numeric columns on each side; up to `samples` sample rows of each kind, changed ones
  with their before and after values) and returns it as a dict. The key must be unique on each
  side (the counts' query checks it). When `a` does not exist and `b` does (a new model), it
  summarises `b` instead (rows, columns, whether the key is unique). `save_to` writes the rows
  that differ to a table (never in a's schema). `fail_on_diff: true` fails (non-zero exit) when
  anything differs, for CI, with the one-line summary.
-#}
{% macro diff_relations(a=none, b=none, key=none, version=none, timestamp=none, columns=none,
    tolerance=none, samples=5, fail_on_diff=false, version_b=none, timestamp_b=none,
    sample_order='key', seed=0, save_to=none, argument_names=none) %}
  {%- set op = 'diff_relations' -%}
  {%- do delta_ops._require_sparkdelta(op) -%}
  {%- if argument_names is not none and argument_names is not mapping -%}
    {{ delta_ops._diff_error(op ~ ": invalid argument_names " ~ (argument_names | string | tojson)
        ~ ": give a mapping of argument to how the caller spells it, e.g. {key: '--key'}.") }}
  {%- endif -%}
  {%- set names = argument_names or {} -%}
  {%- if a is none -%}
    {{ delta_ops._diff_error(op ~ ": give " ~ delta_ops._diff_give(names, 'a', 'fct_orders')
        ~ " (a model or 'schema.table'), and b or a version of it, e.g. --args "
        ~ "'{a: lakehouse.fct_orders, b: dev.fct_orders}' or --args '{a: fct_orders, version: 3}'.") }}
  {%- endif -%}
  {%- if b is none and version is none and timestamp is none -%}
    {{ delta_ops._diff_error(op ~ ": give b (the relation to compare " ~ a ~ " with) or "
        ~ delta_ops._diff_give(names, 'version', '3') ~ " (an earlier version of " ~ a ~ ")"
        ~ (" as well as " ~ delta_ops._diff_spell(names, 'version_b' if version_b is not none else 'timestamp_b')
           if version_b is not none or timestamp_b is not none else '') ~ ".") }}
  {%- endif -%}
  {%- if b is not none and (version_b is not none or timestamp_b is not none) -%}
    {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, 'version_b' if version_b is not none else 'timestamp_b')
        ~ " with b: it reads a second version of a when there is no b; with b, "
        ~ delta_ops._diff_spell(names, 'version') ~ " reads b as of it.") }}
  {%- endif -%}
  {%- for argument, value in [('version', version), ('version_b', version_b), ('samples', samples), ('seed', seed)]
      if value is not none and (value is boolean or not modules.re.fullmatch('[0-9]+', value | string)) -%}
    {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, argument) ~ " "
        ~ (value | string | tojson) ~ ": give a whole number >= 0"
        ~ {'samples': ' (sample rows of each kind)', 'seed': ' (the random samples\' seed)'}.get(argument, ' (a Delta version)') ~ ".") }}
  {%- endfor -%}
  {%- if fail_on_diff is not boolean -%}
    {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, 'fail_on_diff') ~ " "
        ~ (fail_on_diff | string | tojson) ~ ": give true or false.") }}
  {%- endif -%}
  {%- if tolerance is not none and (tolerance is boolean or tolerance is not number or tolerance < 0) -%}
    {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, 'tolerance') ~ " "
        ~ (tolerance | string | tojson) ~ ": give a number >= 0 (numeric columns differing by at most it count as equal).") }}
  {%- endif -%}
  {%- if sample_order not in ['key', 'random'] -%}
    {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, 'sample_order') ~ " "
        ~ (sample_order | string | tojson) ~ ": give key (the smallest keys) or random (a "
        ~ "deterministic random choice, by " ~ delta_ops._diff_spell(names, 'seed') ~ ").") }}
  {%- endif -%}
  {%- set side_a = delta_ops._diff_side(a, 'a', names) -%}
  {%- set side_b = delta_ops._diff_side(b, 'b', names) if b is not none else side_a -%}
  {#- Without b, a as of version is before and a now (or as of version_b) after; with b, b is
      read as of version. -#}
  {%- set read = {'version': version_b, 'timestamp': timestamp_b, 'version_a': version, 'timestamp_a': timestamp}
      if b is none else {'version': version, 'timestamp': timestamp, 'version_a': none, 'timestamp_a': none} -%}
  {%- set name_a = side_a.relation ~ delta_ops._time_travel_clause(read.version_a, read.timestamp_a, op ~ ' of ' ~ side_a.relation) -%}
  {%- set name_b = side_b.relation ~ delta_ops._time_travel_clause(read.version, read.timestamp, op ~ ' of ' ~ side_b.relation) -%}
  {%- set save = delta_ops._diff_save_target(save_to, side_a, side_b, names) -%}
  {%- set wanted = delta_ops._diff_names(columns, 'columns', names) -%}

  {%- set started = modules.datetime.datetime.now() -%}
  {%- set described_b = delta_ops._try_sql('describe query select * from ' ~ name_b) -%}
  {%- if described_b.error -%}
    {{ delta_ops._diff_error(op ~ ": " ~ ("b (" ~ side_b.relation ~ ") does not exist: build it, or check the name."
        if not delta_ops._diff_exists(side_b.relation) else "cannot read b (" ~ name_b ~ "): " ~ described_b.error)) }}
  {%- endif -%}
  {%- set described_a = delta_ops._try_sql('describe query select * from ' ~ name_a) -%}
  {%- if described_a.error -%}
    {%- if b is not none and not delta_ops._diff_exists(side_a.relation) -%}
      {{ return(delta_ops._diff_new_relation(side_a, side_b, name_b, key, described_b.table, fail_on_diff, names, started)) }}
    {%- endif -%}
    {{ delta_ops._diff_error(op ~ ": cannot read a (" ~ name_a ~ "): " ~ described_a.error) }}
  {%- endif -%}
  {%- set types_a = delta_ops._diff_types(described_a.table) -%}
  {%- set types_b = delta_ops._diff_types(described_b.table) -%}
  {%- set key_names = delta_ops._diff_key(key, side_a, side_b, names) -%}

  {#- Resolve names case-insensitively (as Spark does), in a's column order. -#}
  {%- set lower_a, lower_b = {}, {} -%}
  {%- for c in types_a -%}{%- do lower_a.update({c | lower: c}) -%}{%- endfor -%}
  {%- for c in types_b -%}{%- do lower_b.update({c | lower: c}) -%}{%- endfor -%}
  {%- set key_columns = [] -%}
  {%- for k in key_names -%}
    {%- for side, found, relation in [('a', lower_a, name_a), ('b', lower_b, name_b)] if k | lower not in found -%}
      {{ delta_ops._diff_error(op ~ ": key column " ~ k ~ " is not a column of " ~ side
          ~ " (" ~ relation ~ "); its columns: " ~ found.values() | join(', ') ~ ". Give "
          ~ delta_ops._diff_spell(names, 'key') ~ ".") }}
    {%- endfor -%}
    {%- do key_columns.append(lower_a[k | lower]) -%}
  {%- endfor -%}
  {%- set key_lower = key_columns | map('lower') | list -%}
  {%- set removed_columns, added_columns, common = [], [], [] -%}
  {%- for c in types_a if c | lower not in key_lower -%}
    {%- if c | lower in lower_b -%}{%- do common.append(c) -%}{%- else -%}{%- do removed_columns.append(c) -%}{%- endif -%}
  {%- endfor -%}
  {%- for c in types_b if c | lower not in key_lower and c | lower not in lower_a -%}
    {%- do added_columns.append(c) -%}
  {%- endfor -%}
  {%- set compared = [] -%}
  {%- if wanted -%}
    {%- for c in wanted -%}
      {%- if c | lower in key_lower -%}
        {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, 'columns') ~ ": " ~ c
            ~ " is part of the key; give the other columns to compare.") }}
      {%- endif -%}
      {%- for side, found, relation in [('a', lower_a, name_a), ('b', lower_b, name_b)] if c | lower not in found -%}
        {{ delta_ops._diff_error(op ~ ": invalid " ~ delta_ops._diff_spell(names, 'columns') ~ ": column " ~ c
            ~ " is not a column of " ~ side ~ " (" ~ relation ~ "); its columns: " ~ found.values() | join(', ') ~ ".") }}
      {%- endfor -%}
      {%- do compared.append(lower_a[c | lower]) -%}
    {%- endfor -%}
  {%- else -%}
    {%- set compared = common -%}
  {%- endif -%}
  {%- set numeric_type = '(tinyint|smallint|int|bigint|float|double|decimal.*)' -%}
  {%- set numeric, text, summed = [], [], [] -%}
  {%- for c in compared -%}
    {%- set type_a, type_b = types_a[c], types_b[lower_b[c | lower]] -%}
    {%- if type_a != type_b -%}{%- do text.append(c) -%}
    {%- elif modules.re.fullmatch(numeric_type, type_a) -%}{%- do numeric.append(c) -%}
    {%- endif -%}
    {%- if modules.re.fullmatch(numeric_type, type_a) and modules.re.fullmatch(numeric_type, type_b) -%}
      {%- do summed.append(c) -%}
    {%- endif -%}
  {%- endfor -%}

  {%- set mixed_key_types = [] -%}
  {%- for k in key_columns if types_a[k] != types_b[lower_b[k | lower]] -%}
    {%- do mixed_key_types.append(k) -%}
  {%- endfor -%}
  {%- set query = {'a': side_a.relation, 'b': side_b.relation, 'key': key_columns, 'columns': compared,
      'version': read.version, 'timestamp': read.timestamp, 'version_a': read.version_a,
      'timestamp_a': read.timestamp_a, 'tolerance': tolerance, 'numeric_columns': numeric,
      'text_columns': text, 'mixed_key_types': mixed_key_types | length > 0} -%}
  {%- set counted = delta_ops._try_sql(delta_ops.get_diff_relations_sql(summed_columns=summed, **query)) -%}
  {%- if counted.error -%}
    {{ delta_ops._diff_error(op ~ " of " ~ name_a ~ " with " ~ name_b ~ ": " ~ counted.error) }}
  {%- endif -%}
  {%- set row = delta_ops._rows_as_dicts(counted.table)[0] -%}
  {#- The key must be unique on each side, or the counts mean nothing: the counts say whether it
      is; the keys repeated are looked up only then, for the message. -#}
  {%- for side, relation in [('a', name_a), ('b', name_b)] if row['duplicated_' ~ side] | int -%}
    {%- set dups = delta_ops._try_sql(delta_ops._diff_duplicates_sql(relation, key_columns)) -%}
    {%- if dups.error -%}
      {{ delta_ops._diff_error(op ~ ": checking the key of " ~ side ~ " (" ~ relation ~ "): " ~ dups.error) }}
    {%- endif -%}
    {%- set shown = [] -%}
    {%- for dup in dups.table.rows -%}
      {%- do shown.append(delta_ops._diff_key_text(fromjson(dup['sample']).key) ~ ' x' ~ dup['n'] | int) -%}
    {%- endfor -%}
    {{ delta_ops._diff_error(op ~ ": the key (" ~ key_columns | join(', ') ~ ") is not "
        ~ "unique in " ~ side ~ " (" ~ relation ~ "): " ~ dups.table.rows[0]['keys'] | int
        ~ " duplicated key" ~ ('s' if dups.table.rows[0]['keys'] | int != 1 else '') ~ ", e.g. "
        ~ shown | join(', ') ~ ". Give a unique " ~ delta_ops._diff_spell(names, 'key') ~ ".") }}
  {%- endfor -%}
  {%- set matched = row.changed | int + row.unchanged | int -%}
  {%- set column_changes, column_stats, totals = {}, {}, {} -%}
  {%- for c in compared -%}
    {%- set i = loop.index0 -%}
    {%- set both_null, one_null, differ = row['both_null_' ~ i] | int, row['one_null_' ~ i] | int, row['differ_' ~ i] | int -%}
    {%- do column_changes.update({c: one_null + differ}) -%}
    {%- do column_stats.update({c: {'changed': one_null + differ,
        'share': (100.0 * (one_null + differ) / matched) | round(2) if matched else none,
        'match': matched - both_null - one_null - differ, 'both_null': both_null,
        'one_null': one_null, 'differ': differ}}) -%}
  {%- endfor -%}
  {%- for c in summed -%}
    {%- do totals.update({c: {'a': row['sum_a_' ~ loop.index0], 'b': row['sum_b_' ~ loop.index0],
        'difference': row['sum_difference_' ~ loop.index0]}}) -%}
  {%- endfor -%}
  {%- set result = {
      'a': name_a, 'b': name_b, 'key': key_columns, 'new_relation': false,
      'rows_a': row.rows_a | int, 'rows_b': row.rows_b | int,
      'removed': row.removed | int, 'added': row.added | int,
      'changed': row.changed | int, 'unchanged': row.unchanged | int,
      'columns': compared, 'column_changes': column_changes, 'column_stats': column_stats,
      'totals': totals, 'columns_removed': removed_columns, 'columns_added': added_columns,
      'compared_as_text': text, 'tolerance': tolerance, 'sample_order': sample_order,
      'seed': seed | int, 'samples': {'removed': [], 'added': [], 'changed': []}, 'saved_to': none} -%}
  {%- set rows_differ = (result.removed + result.added + result.changed) > 0 -%}
  {%- do result.update({'differs': rows_differ or (removed_columns + added_columns) | length > 0}) -%}
  {%- if samples | int > 0 and rows_differ -%}
    {%- set sampled = delta_ops._try_sql(delta_ops.get_diff_relations_sql(samples=samples | int,
        sample_order=sample_order, seed=seed | int, **query)) -%}
    {%- if sampled.error -%}
      {{ delta_ops._diff_error(op ~ ": sample rows: " ~ sampled.error) }}
    {%- endif -%}
    {%- for s in delta_ops._rows_as_dicts(sampled.table) -%}
      {%- do result.samples[s.kind].append(fromjson(s.sample)) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if save is not none -%}
    {%- do delta_ops._diff_save(save, delta_ops.get_diff_relations_sql(mismatches=true, **query)
        ~ ('' if rows_differ else '\nlimit 0'), name_a ~ ' vs ' ~ name_b) -%}
    {%- do result.update({'saved_to': save | string}) -%}
  {%- endif -%}
  {%- do result.update({'summary': delta_ops._diff_summary(result),
      'seconds': (modules.datetime.datetime.now() - started).total_seconds()}) -%}
  {%- do delta_ops._diff_report(result) -%}
  {%- if fail_on_diff and result.differs -%}
    {{ delta_ops._diff_error(op ~ ": " ~ result.summary ~ " (a = " ~ name_a ~ ", b = " ~ name_b
        ~ "); " ~ delta_ops._diff_spell(names, 'fail_on_diff') ~ " is set.") }}
  {%- endif -%}
  {{ return(result) }}
{% endmacro %}


{#- Raise what diff_relations reports: a bad argument or, with fail_on_diff, data that differ.
    dbt prints a compilation error as "Compilation Error in macro ...", which neither is; the
    dependency error is the one of dbt's Jinja exceptions that prints as a plain "Runtime
    Error" with the message alone (and fails the command). -#}
{% macro _diff_error(message) %}
  {{ exceptions.raise_dependency_error(message) }}
{% endmacro %}


{#- How the caller spells an argument in messages: a CLI passes its flags in argument_names. -#}
{% macro _diff_spell(names, argument) %}
  {{ return(names.get(argument, argument)) }}
{% endmacro %}


{#- "key (e.g. --args '{..., key: [order_id]}')", or the caller's spelling of the argument. -#}
{% macro _diff_give(names, argument, example) %}
  {%- if argument in names -%}{{ return(names[argument]) }}{%- endif -%}
  {{ return(argument ~ " (e.g. --args '{..., " ~ argument ~ ": " ~ example ~ "}')") }}
{% endmacro %}


{#- A list of column names from an argument, each validated, with the argument named. -#}
{% macro _diff_names(value, argument, names) %}
  {%- if value is not none and not (value is string or (value is iterable and value is not mapping)) -%}
    {{ delta_ops._diff_error("diff_relations: invalid " ~ delta_ops._diff_spell(names, argument) ~ " "
        ~ (value | string | tojson) ~ ": give a list of column names.") }}
  {%- endif -%}
  {%- set found = delta_ops._as_list(value, 'diff_relations argument ' ~ argument) -%}
  {%- for name in found if name is not string or not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name) -%}
    {{ delta_ops._diff_error("diff_relations: invalid " ~ delta_ops._diff_spell(names, argument)
        ~ " column " ~ (name | string | tojson) ~ ": use letters, digits and underscores only.") }}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{#- A relation name from an argument ('table' or 'schema.table'), validated. -#}
{% macro _diff_relation_name(name, argument, names) %}
  {%- if name is not string or not modules.re.fullmatch('([A-Za-z_][A-Za-z0-9_]*[.])?[A-Za-z_][A-Za-z0-9_]*', name) -%}
    {{ delta_ops._diff_error("diff_relations: invalid " ~ delta_ops._diff_spell(names, argument) ~ " "
        ~ (name | string | tojson) ~ ": give a model name or 'schema.table' (letters, digits and underscores).") }}
  {%- endif -%}
  {{ return(delta_ops.relation_from_name(name, 'diff_relations argument ' ~ argument)) }}
{% endmacro %}


{#- {'relation', 'node'} of an argument: a model, seed or snapshot name of the project (its
    relation) or a 'table' / 'schema.table' name (with the node that writes it, if any). -#}
{% macro _diff_side(name, argument, names={}) %}
  {%- set relation = delta_ops._diff_relation_name(name, argument, names) -%}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed', 'snapshot'])
      | rejectattr('config.materialized', 'equalto', 'ephemeral') | list -%}
  {%- if '.' not in name -%}
    {%- set matches = nodes | selectattr('name', 'equalto', name) | list -%}
    {%- if matches -%}
      {%- set node = matches[0] -%}
      {{ return({'relation': delta_ops.relation_from_name(delta_ops._table_name_of(node),
          'diff_relations argument ' ~ argument), 'node': node}) }}
    {%- endif -%}
  {%- endif -%}
  {%- set owners = nodes | selectattr('schema', 'equalto', relation.schema)
      | selectattr('alias', 'equalto', relation.identifier) | list -%}
  {%- if not owners -%}
    {%- set owners = nodes | selectattr('name', 'equalto', relation.identifier) | list -%}
  {%- endif -%}
  {{ return({'relation': relation, 'node': owners[0] if owners else none}) }}
{% endmacro %}


{#- Whether a table or view exists (false when its schema does not). -#}
{% macro _diff_exists(relation) %}
  {%- set found = delta_ops._try_sql('show tables in ' ~ safe_identifier(relation.schema, 'schema')
      ~ " like '" ~ relation.identifier ~ "'") -%}
  {%- if found.error -%}
    {%- if 'SCHEMA_NOT_FOUND' in found.error or 'not found' in found.error | lower -%}{{ return(false) }}{%- endif -%}
    {{ delta_ops._diff_error("diff_relations: looking for " ~ relation ~ ": " ~ found.error) }}
  {%- endif -%}
  {{ return(found.table.rows | length > 0) }}
{% endmacro %}


{#- The key columns: the argument, else a's (then b's) model unique_key, else its contract's
    primary key, else the columns of its one unique test; validated names. Without any: an
    error, or [] when not `required`. -#}
{% macro _diff_key(key, side_a, side_b, names={}, required=true) %}
  {#- A `set` inside a loop does not outlive it in Jinja: the found key goes into lists. -#}
  {%- set found = delta_ops._diff_names(key, 'key', names) -%}
  {%- set source = ['argument key'] -%}
  {%- for node in [side_a.node, side_b.node] if node is not none and not found -%}
    {%- set unique_key = node.config.get('unique_key') -%}
    {%- if unique_key -%}
      {%- do found.extend(delta_ops._as_list(unique_key, node.name ~ "'s unique_key")) -%}
      {%- do source.append(node.name ~ "'s unique_key") -%}
    {%- else -%}
      {%- for constraint in node.get('constraints', []) if constraint.type == 'primary_key' -%}
        {%- do found.extend(constraint.columns or []) -%}
      {%- endfor -%}
      {%- for column in node.get('columns', {}).values() -%}
        {%- for constraint in column.get('constraints', []) if constraint.type == 'primary_key' -%}
          {%- do found.append(column.name) -%}
        {%- endfor -%}
      {%- endfor -%}
      {%- do source.append(node.name ~ "'s primary_key constraint") -%}
    {%- endif -%}
    {%- if not found -%}
      {%- set tested = delta_ops._diff_unique_tests(node) -%}
      {%- if tested | length > 1 -%}
        {{ delta_ops._diff_error("diff_relations: " ~ node.name ~ " has several unique tests ("
            ~ tested | map('join', ', ') | join('; ') ~ "): give "
            ~ delta_ops._diff_give(names, 'key', '[' ~ tested[0] | join(', ') ~ ']') ~ ".") }}
      {%- endif -%}
      {%- do found.extend(tested[0] if tested else []) -%}
      {%- do source.append(node.name ~ "'s unique test") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not found and required -%}
    {{ delta_ops._diff_error("diff_relations: no key to match the rows of "
        ~ side_a.relation ~ " and " ~ side_b.relation ~ " by: give "
        ~ delta_ops._diff_give(names, 'key', '[order_id]') ~ ", or give the model a unique_key "
        ~ "config, a primary_key constraint in its contract, or a unique test.") }}
  {%- endif -%}
  {%- for name in found -%}
    {%- do safe_identifier(name, 'diff_relations key column (from ' ~ source[-1] ~ ')') -%}
  {%- endfor -%}
  {{ return(found | unique | list) }}
{% endmacro %}


{#- The column lists of the model's uniqueness tests: dbt's `unique` (one column) and
    dbt_utils' `unique_combination_of_columns`. -#}
{% macro _diff_unique_tests(node) %}
  {%- set found = [] -%}
  {%- for test in graph.nodes.values() if test.resource_type == 'test'
      and test.get('attached_node') == node.unique_id and test.get('test_metadata') -%}
    {%- set kwargs = test.test_metadata.kwargs -%}
    {%- if test.test_metadata.name == 'unique' and (test.column_name or kwargs.column_name) -%}
      {%- do found.append([test.column_name or kwargs.column_name]) -%}
    {%- elif test.test_metadata.name == 'unique_combination_of_columns' -%}
      {%- do found.append(kwargs.combination_of_columns | list) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{#- {column: data type} of a `describe query` result, in order. -#}
{% macro _diff_types(described) %}
  {%- set types = {} -%}
  {%- for row in described.rows -%}
    {%- do types.update({row['col_name']: row['data_type'] | lower}) -%}
  {%- endfor -%}
  {{ return(types) }}
{% endmacro %}


{#- b when a does not exist (a new model): its rows, columns and, with a key, whether the key
    is unique; in one scan. Everything in b counts as added. -#}
{% macro _diff_new_relation(side_a, side_b, name_b, key, described_b, fail_on_diff, names, started) %}
  {%- set types = delta_ops._diff_types(described_b) -%}
  {%- set key_columns = delta_ops._diff_key(key, side_a, side_b, names, required=false) -%}
  {%- set lower = {} -%}
  {%- for c in types -%}{%- do lower.update({c | lower: c}) -%}{%- endfor -%}
  {%- for k in key_columns if k | lower not in lower -%}
    {{ delta_ops._diff_error("diff_relations: key column " ~ k ~ " is not a column of b ("
        ~ name_b ~ "); its columns: " ~ types.keys() | join(', ') ~ ". Give "
        ~ delta_ops._diff_spell(names, 'key') ~ ".") }}
  {%- endfor -%}
  {%- set fields, key_names = [], [] -%}
  {%- for k in key_columns -%}
    {%- do key_names.append(lower[k | lower]) -%}
    {%- do fields.append(delta_ops._diff_string(lower[k | lower]) ~ ', ' ~ quote_identifier(lower[k | lower])) -%}
  {%- endfor -%}
  {%- set counted = delta_ops._try_sql('select count(*) as n'
      ~ (', count(distinct named_struct(' ~ fields | join(', ') ~ ')) as keys' if fields else '')
      ~ ' from ' ~ name_b) -%}
  {%- if counted.error -%}
    {{ delta_ops._diff_error("diff_relations: counting the rows of b (" ~ name_b ~ "): " ~ counted.error) }}
  {%- endif -%}
  {%- set row = delta_ops._rows_as_dicts(counted.table)[0] -%}
  {%- set rows = row.n | int -%}
  {%- set result = {
      'a': side_a.relation | string, 'b': name_b, 'new_relation': true,
      'key': key_names,
      'key_unique': (row['keys'] | int == rows) if key_columns else none,
      'duplicated_rows': (rows - row['keys'] | int) if key_columns else none,
      'rows_a': 0, 'rows_b': rows, 'removed': 0, 'added': rows, 'changed': 0, 'unchanged': 0,
      'columns': [], 'column_changes': {}, 'column_stats': {}, 'totals': {},
      'columns_removed': [], 'columns_added': types.keys() | list, 'column_types': types,
      'compared_as_text': [], 'tolerance': none, 'samples': {'removed': [], 'added': [], 'changed': []},
      'saved_to': none, 'differs': true} -%}
  {%- do result.update({'summary': delta_ops._diff_summary(result),
      'seconds': (modules.datetime.datetime.now() - started).total_seconds()}) -%}
  {%- do delta_ops._diff_report(result) -%}
  {%- if fail_on_diff -%}
    {{ delta_ops._diff_error("diff_relations: " ~ result.summary ~ "; "
        ~ delta_ops._diff_spell(names, 'fail_on_diff') ~ " is set.") }}
  {%- endif -%}
  {{ return(result) }}
{% endmacro %}


{#- The relation save_to names, refused where it must not write: a's schema (production, or
    the table being compared with an earlier version of itself), b itself, or a table that
    diff_relations did not write. none without save_to. -#}
{% macro _diff_save_target(save_to, side_a, side_b, names) %}
  {%- if save_to is none -%}{{ return(none) }}{%- endif -%}
  {%- set spelled = delta_ops._diff_spell(names, 'save_to') -%}
  {%- set relation = delta_ops._diff_relation_name(save_to, 'save_to', names) -%}
  {%- if relation.schema | lower == side_a.relation.schema | lower -%}
    {{ delta_ops._diff_error("diff_relations: invalid " ~ spelled ~ " " ~ relation ~ ": it is in the "
        ~ "schema of a (" ~ side_a.relation.schema ~ "), which diff_relations never writes into; give "
        ~ "a table in another schema (e.g. your development schema).") }}
  {%- endif -%}
  {%- if relation.schema | lower == side_b.relation.schema | lower
      and relation.identifier | lower == side_b.relation.identifier | lower -%}
    {{ delta_ops._diff_error("diff_relations: invalid " ~ spelled ~ " " ~ relation ~ ": it is b "
        ~ "itself; give another table name.") }}
  {%- endif -%}
  {%- if delta_ops._diff_exists(relation) -%}
    {%- set properties = delta_ops._try_sql('show tblproperties ' ~ relation) -%}
    {%- set written = [] if properties.error else properties.table.rows
        | selectattr('key', 'equalto', 'delta_ops.diff_relations') | list -%}
    {%- if not written -%}
      {{ delta_ops._diff_error("diff_relations: invalid " ~ spelled ~ " " ~ relation ~ ": it exists "
          ~ "and diff_relations did not write it; give a new table name, or drop it first.") }}
    {%- endif -%}
  {%- endif -%}
  {{ return(relation) }}
{% endmacro %}


{#- Write the rows that differ (the mismatches query) to `relation`, replacing an earlier diff
    there, marked as diff_relations' own by a table property. -#}
{% macro _diff_save(relation, sql, what) %}
  {%- set written = delta_ops._try_sql('create or replace table ' ~ relation ~ ' using delta '
      ~ 'tblproperties (\'delta_ops.diff_relations\' = ' ~ delta_ops._diff_string(what) ~ ') as\n' ~ sql) -%}
  {%- if written.error -%}
    {{ delta_ops._diff_error("diff_relations: writing save_to " ~ relation ~ ": " ~ written.error) }}
  {%- endif -%}
{% endmacro %}


{#- Up to 5 keys that occur more than once (most often first), with how many keys do. -#}
{% macro _diff_duplicates_sql(relation_text, key) %}
  {%- set columns = [] -%}
  {%- set fields = [] -%}
  {%- for k in key -%}
    {%- do columns.append(quote_identifier(k)) -%}
    {%- do fields.append(delta_ops._diff_string(k) ~ ', ' ~ quote_identifier(k)) -%}
  {%- endfor -%}
  {{ return('select to_json(named_struct(\'key\', named_struct(' ~ fields | join(', ')
      ~ ')), map(\'ignoreNullFields\', \'false\')) as sample, n, count(*) over () as keys from ('
      ~ 'select ' ~ columns | join(', ') ~ ', count(*) as n from ' ~ relation_text ~ ' group by '
      ~ columns | join(', ') ~ ' having count(*) > 1) order by n desc, sample limit 5') }}
{% endmacro %}


{#- (k1=v1, k2=v2): a sample key for people; strings quoted, NULL as NULL. -#}
{% macro _diff_key_text(key) %}
  {%- set parts = [] -%}
  {%- for name, value in key.items() -%}
    {%- do parts.append(name ~ '=' ~ ('NULL' if value is none else (value | tojson))) -%}
  {%- endfor -%}
  {{ return('(' ~ parts | join(', ') ~ ')') }}
{% endmacro %}


{#- The one line a reviewer and a CI log read first. -#}
{% macro _diff_summary(r) %}
  {%- if r.new_relation -%}
    {{ return("data differs: a (" ~ r.a ~ ") does not exist; b (" ~ r.b ~ ") is new: " ~ r.rows_b
        ~ " row" ~ ('s' if r.rows_b != 1 else '') ~ ", " ~ r.columns_added | length ~ " column"
        ~ ('s' if r.columns_added | length != 1 else '')
        ~ (", key (" ~ r.key | join(', ') ~ ") " ~ ("unique" if r.key_unique else "not unique ("
           ~ r.duplicated_rows ~ " rows repeat a key)") if r.key else ", no key known")) }}
  {%- endif -%}
  {%- if not r.differs -%}{{ return('identical') }}{%- endif -%}
  {%- set parts = [r.removed ~ ' removed, ' ~ r.added ~ ' added, ' ~ r.changed ~ ' changed'] -%}
  {%- if r.columns_removed -%}{%- do parts.append('columns removed: ' ~ r.columns_removed | join(', ')) -%}{%- endif -%}
  {%- if r.columns_added -%}{%- do parts.append('columns added: ' ~ r.columns_added | join(', ')) -%}{%- endif -%}
  {{ return('data differs: ' ~ parts | join('; ')) }}
{% endmacro %}


{#- A value for people: NULL as NULL, '' and the text 'NULL' quoted, long text cut. -#}
{% macro _diff_shown(value) %}
  {%- if value is none -%}{{ return('NULL') }}{%- endif -%}
  {%- set text = value | string -%}
  {%- if text in ['', 'NULL'] -%}{{ return("'" ~ text ~ "'") }}{%- endif -%}
  {{ return((text[:37] ~ '...') if text | length > 40 else text) }}
{% endmacro %}


{#- The summary a reviewer reads, then the result as one JSON line for scripts. -#}
{% macro _diff_report(r) %}
  {%- set lines = [
      'diff_relations: a (before) = ' ~ r.a ~ ', b (after) = ' ~ r.b
          ~ (', key (' ~ r.key | join(', ') ~ ')' if r.key else '')
          ~ (', tolerance ' ~ r.tolerance if r.tolerance is not none else '')
          ~ ' in ' ~ '%.1f' | format(r.seconds) ~ 's'] -%}
  {%- if r.new_relation -%}
    {%- do lines.append('  a does not exist: b is a new relation') -%}
    {%- do lines.append('  rows:    ' ~ r.rows_b) -%}
    {%- do lines.append('  columns: ' ~ r.columns_added | length ~ ' (' ~ r.columns_added | join(', ') ~ ')') -%}
    {%- do lines.append('  key:     ' ~ ((r.key | join(', ') ~ (' (unique)' if r.key_unique
        else ' (not unique: ' ~ r.duplicated_rows ~ ' rows repeat a key)')) if r.key else 'none known')) -%}
  {%- else -%}
    {%- do lines.append('  rows in a ' ~ r.rows_a ~ ', in b ' ~ r.rows_b) -%}
    {%- for kind in ['removed', 'added', 'changed', 'unchanged'] -%}
      {%- do lines.append('  ' ~ (kind ~ ':').ljust(11) ~ (r[kind] | string).rjust(10)) -%}
      {%- for s in r.samples.get(kind, []) -%}
        {%- set changes = [] -%}
        {%- for v in s.get('values') or [] -%}
          {%- do changes.append(v.column ~ ': ' ~ delta_ops._diff_shown(v.a) ~ ' -> ' ~ delta_ops._diff_shown(v.b)) -%}
        {%- endfor -%}
        {%- do lines.append('      ' ~ delta_ops._diff_key_text(s.key) ~ ('  ' ~ changes | join('; ') if changes else '')) -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- if r.samples.removed or r.samples.added or r.samples.changed -%}
      {%- do lines.append('  (sample rows: ' ~ ('the smallest keys' if r.sample_order == 'key'
          else 'random, seed ' ~ r.seed) ~ '; changed ones as column: a -> b)') -%}
    {%- endif -%}
  {%- endif -%}
  {%- if r.columns -%}
    {%- set width = [r.columns | map('length') | max, 6] | max -%}
    {%- do lines.append('  ' ~ 'column'.ljust(width) ~ '   changed   share      match  both null   one null     differ') -%}
    {%- for c in r.columns -%}
      {%- set s = r.column_stats[c] -%}
      {%- set share = '-' if s.share is none else ('<0.1%' if 0 < s.share < 0.05 else '%.1f%%' | format(s.share)) -%}
      {%- do lines.append('  ' ~ c.ljust(width) ~ (s.changed | string).rjust(10) ~ share.rjust(8)
          ~ (s.match | string).rjust(11) ~ (s.both_null | string).rjust(11) ~ (s.one_null | string).rjust(11)
          ~ (s.differ | string).rjust(11) ~ ('  (types differ: compared as text)' if c in r.compared_as_text else '')) -%}
    {%- endfor -%}
    {%- do lines.append('  (changed and share: of the ' ~ (r.changed + r.unchanged) ~ ' rows in both)') -%}
  {%- endif -%}
  {%- if r.totals -%}
    {%- set width = [r.totals.keys() | map('length') | max, 6] | max -%}
    {%- set texts = ['difference'] -%}
    {%- for t in r.totals.values() -%}{%- do texts.extend([t.a | string, t.b | string, t.difference | string]) -%}{%- endfor -%}
    {%- set wide = (texts | map('length') | max) + 2 -%}
    {%- do lines.append('  ' ~ 'total'.ljust(width) ~ 'a'.rjust(wide) ~ 'b'.rjust(wide) ~ 'difference'.rjust(wide)) -%}
    {%- for c, t in r.totals.items() -%}
      {%- do lines.append('  ' ~ c.ljust(width) ~ (t.a | string).rjust(wide) ~ (t.b | string).rjust(wide)
          ~ (t.difference | string).rjust(wide)) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if r.columns_removed and not r.new_relation -%}{%- do lines.append('  columns removed (in a only): ' ~ r.columns_removed | join(', ')) -%}{%- endif -%}
  {%- if r.columns_added and not r.new_relation -%}{%- do lines.append('  columns added (in b only): ' ~ r.columns_added | join(', ')) -%}{%- endif -%}
  {%- if r.saved_to -%}{%- do lines.append('  rows that differ saved to ' ~ r.saved_to) -%}{%- endif -%}
  {%- do lines.append('  ' ~ r.summary) -%}
  {{ log(lines | join('\n'), info=True) }}
  {{ log('diff_relations result: ' ~ tojson(r), info=True) }}
{% endmacro %}
