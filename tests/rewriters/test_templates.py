"""carve.rewriters.templates on its own: placeholders of each kind, nodes inserted as they are
(never copied), origins for what a template makes, and clear errors for a misfit."""

from __future__ import annotations

import libcst as cst
import pytest

from carve.rewriters.templates import TemplateError, replace, replace_expression, replace_statement


def code(*nodes: cst.CSTNode) -> str:
    return "".join(cst.Module([]).code_for_node(node) for node in nodes).strip()


class Nodes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.ids: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.ids.add(id(node))
        return True


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Is `node` itself (not an equal copy) in `tree`?"""
    nodes = Nodes()
    tree.visit(nodes)
    return id(node) in nodes.ids


def test_a_string_is_a_name_and_an_int_a_number():
    statement = replace_statement("regions.graph_break(line, code)", regions="_carve_f", line=4,
                                  code=cst.SimpleString('"CRV003"'))
    assert code(statement) == '_carve_f.graph_break(4, "CRV003")'


def test_a_def_takes_its_name_parameters_and_body():
    body = [cst.parse_statement("y = x * 2\n"), cst.parse_statement("return y\n")]
    made = replace_statement(
        "@regions.graph(first, last)\ndef name(params):\n    body\n",
        regions="_carve_f", first=2, last=3, name="_f_graph_region_0",
        params=["x", cst.Name("w"), cst.Param(cst.Name("n"), default=cst.Integer("1"))], body=body,
    )
    assert code(made) == ("@_carve_f.graph(2, 3)\ndef _f_graph_region_0(x, w, n = 1):\n"
                          "    y = x * 2\n    return y")


def test_statement_lists_fill_their_places_and_an_empty_list_leaves_nothing():
    made = replace_statement("def f():\n    before\n    body\n    after\n",
                             before=[], body=[cst.parse_statement("pass\n")], after=[])
    assert code(made) == "def f():\n    pass"


def test_an_expression_in_a_statement_place_is_an_expression_statement():
    call = cst.parse_expression("g(x)")
    assert code(*replace("call", call=call)) == "g(x)"


def test_arguments_take_names_expressions_and_args_and_an_empty_list_leaves_no_comma():
    arguments = ["x", cst.parse_expression("y + 1"), cst.Arg(cst.Name("z"), keyword=cst.Name("k"))]
    assert code(replace_expression("name(arguments)", name="g", arguments=arguments)) == "g(x, y + 1, k = z)"
    assert code(replace_expression("name(first, arguments)", name="g", first="a", arguments=[])) == "g(a)"
    assert code(replace_expression("name(arguments)", name="g", arguments=[])) == "g()"


def test_a_list_as_a_whole_return_value_or_assignment_target_is_a_tuple():
    assert code(*replace("return outputs", outputs=["a", "b"])) == "return a, b"
    assert code(*replace("return outputs", outputs=["a"])) == "return a"
    assert code(*replace("outputs = call", outputs=["a", "b"], call=cst.parse_expression("f()"))) == "a, b = f()"


def test_attribute_names_keywords_and_imported_names_are_never_placeholders():
    made = replace("import graph\nx = graph.graph(graph=graph)\nfrom carve import graph as unbound\n",
                   graph="g", unbound="_u")
    assert code(*made) == "import graph\nx = g.graph(graph=g)\nfrom carve import graph as _u"


def test_nodes_are_inserted_as_they_are_not_copied():
    statement = cst.parse_statement("y = x * 2\n")
    expression = cst.parse_expression("x.sum()")
    param = cst.Param(cst.Name("x"))
    made = replace_statement("def f(params):\n    body\n    return value\n",
                             params=[param], body=[statement], value=expression)
    assert isinstance(made, cst.FunctionDef) and isinstance(made.body, cst.IndentedBlock)
    assert made.params.params[0] is param
    assert made.body.body[0] is statement
    assert contains(made, expression)
    call = replace_expression("regions.compiled(function)", regions="_carve_f", function=expression)
    assert isinstance(call, cst.Call) and call.args[0].value is expression


def test_a_node_used_twice_is_itself_once_and_a_copy_at_the_other_place():
    name = cst.Name("z")
    made = replace_statement("if name is unbound: del name", name=name, unbound="_u")
    assert code(made) == "if z is _u: del z"
    assert contains(made, name)
    assert code(made).count("z") == 2


def test_origin_marks_each_statement_the_template_made_and_no_inserted_one():
    user = cst.parse_statement("y = x * 2\n")
    made: list[cst.CSTNode] = []
    statements = replace("try:\n    body\nexcept NameError:\n    t = u\nreturn t\n",
                         body=[user], t="_carve_a0", u="_u", origin=made.append)
    assert {id(node) for node in made} >= {id(statement) for statement in statements}
    assert all(id(node) != id(user) for node in made)
    assert all(isinstance(node, cst.BaseStatement) for node in made)
    # The try, the handler's assignment and the return: each a statement of the template's own.
    assert [code(node).splitlines()[0] for node in made] == ["try:", "_carve_a0 = _u", "return _carve_a0"]


def test_no_origin_marks_nothing_and_templates_are_dedented():
    statements = replace("""
        try:
            t = name
        except NameError:
            t = unbound
        """, t="_carve_a0", name="last", unbound="_u")
    assert code(*statements) == "try:\n    _carve_a0 = last\nexcept NameError:\n    _carve_a0 = _u"


def test_a_replacement_for_no_placeholder_is_an_error():
    with pytest.raises(TemplateError, match="no placeholder outputs"):
        replace("return call", call="f", outputs=["a"])
    with pytest.raises(TemplateError, match="no placeholder graph"):
        replace_expression("regions.graph", regions="_carve_f", graph="g")  # an attribute name is no placeholder


@pytest.mark.parametrize("template, replacements, message", [
    ("f(x)", {"x": cst.parse_statement("pass")}, "x takes an expression"),
    ("def name(): pass", {"name": cst.parse_expression("a + b")}, "name takes a name"),
    ("def f(params): pass", {"params": [cst.parse_expression("a + b")]}, "params takes a parameter"),
    ("y = x", {"x": "not a name"}, "x takes an expression"),
    ("def f():\n    body\n", {"body": [cst.parse_expression("a")]}, "body takes a statement"),
    ("y = x + 1", {"x": ["a", "b"]}, "x stands for one expression here, but its replacement is a list"),
    ("return x", {"x": []}, "x stands for a tuple of no items"),
])
def test_a_replacement_of_the_wrong_kind_is_an_error_naming_the_placeholder(template, replacements, message):
    with pytest.raises(TemplateError, match=message):
        replace(template, **replacements)


def test_one_statement_and_one_expression_forms_refuse_other_templates():
    with pytest.raises(TemplateError, match="2 statements, not one"):
        replace_statement("a = b\nc = d\n", b="x")
    with pytest.raises(TemplateError, match="not a Python expression"):
        replace_expression("a = b", b="x")
    with pytest.raises(TemplateError, match="not Python"):
        replace("def (:", x="y")


def test_the_outliner_s_templates_give_the_glue_they_make_the_user_s_lines():
    from carve.rewriters.analysis import ModuleContext, analyze_function
    from carve.rewriters.outline import outline_function

    module = cst.parse_module("def f(x):\n    y = x * 2\n    # shown\n    print(y)\n    return y + 1\n")
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    context = ModuleContext(module)
    outlined = outline_function(function, analyze_function(function, context, None, {}), context,
                                regions_var="_carve_f", region_prefix="f")
    # Each recorded node by its last line of code: first and last user line, verbatim or glue.
    origins = {code(node).splitlines()[-1]: (o.first_line, o.last_line, o.verbatim)
               for node, o in outlined.origins.values()}
    assert origins["return y"] == (2, 2, False)  # the outputs of region 0
    assert origins['_carve_f.graph_break(4, "CRV003")'] == (4, 4, False)  # though the comments above it changed
    assert origins["y = _f_graph_region_0(x)"] == (2, 2, False)
    assert origins["return _f_graph_region_1(y)"] == (5, 5, False)
    assert origins["y = x * 2"] == (2, 2, True)  # the user's own statement, in the region
    region_defs = [o for node, o in outlined.origins.values() if any(node is d for d in outlined.region_defs)]
    assert [(o.first_line, o.last_line) for o in region_defs] == [(2, 2), (5, 5)]
