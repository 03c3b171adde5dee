// Execution checks of the elementwise lowering (loom.unary, binary, compare,
// where, clamp, cast, constant): every enum kind, broadcasting, signed and
// unsigned integers, NaN and infinities. Expected values come from numpy via
// test/Conformance/loom_reference.py (softplus of large x uses the stable form,
// which is x where numpy's log1p(exp(x)) overflows).
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32> {bufferization.access = "read"})
func.func private @printMemrefF64(tensor<*xf64> {bufferization.access = "read"})
func.func private @printMemrefI32(tensor<*xi32> {bufferization.access = "read"})
func.func private @printMemrefI64(tensor<*xi64> {bufferization.access = "read"})

func.func @main() {
  // unary: every float kind
  %v1 = loom.constant dense<[-3.700000047683716, -2.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.700000047683716]> : tensor<8xf32>
  %v2 = loom.constant dense<[0.25, 1.0, 2.5, 9.0]> : tensor<4xf32>
  // unary neg
  %v3 = loom.unary neg %v1 : tensor<8xf32>
  %v4 = tensor.cast %v3 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v4) : (tensor<*xf32>) -> ()
  // unary abs
  %v5 = loom.unary abs %v1 : tensor<8xf32>
  %v6 = tensor.cast %v5 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v6) : (tensor<*xf32>) -> ()
  // unary exp
  %v7 = loom.unary exp %v1 : tensor<8xf32>
  %v8 = loom.constant dense<[0.02472352236509323, 0.0820850059390068, 0.6065306663513184, 1.0, 1.6487212181091309, 4.481688976287842, 12.182493209838867, 40.44730758666992]> : tensor<8xf32>
  %v9 = loom.constant dense<[1.247235218215792e-06, 1.8208501160188462e-06, 7.065306817821693e-06, 1.1000000085914508e-05, 1.748721297190059e-05, 4.5816890633432195e-05, 0.00012282493116799742, 0.00040547308162786067]> : tensor<8xf32>
  %v10 = loom.binary sub %v7, %v8 : tensor<8xf32>, tensor<8xf32>
  %v11 = loom.unary abs %v10 : tensor<8xf32>
  %v12 = loom.compare le %v11, %v9 : tensor<8xf32>, tensor<8xf32>
  %v13 = loom.cast %v12 : tensor<8xi1> to tensor<8xi32>
  %v14 = tensor.cast %v13 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v14) : (tensor<*xi32>) -> ()
  // unary log
  %v15 = loom.unary log %v2 : tensor<4xf32>
  %v16 = loom.constant dense<[-1.3862943649291992, 0.0, 0.9162907600402832, 2.1972246170043945]> : tensor<4xf32>
  %v17 = loom.constant dense<[1.4862943316984456e-05, 9.999999974752427e-07, 1.0162907528865617e-05, 2.2972246370045468e-05]> : tensor<4xf32>
  %v18 = loom.binary sub %v15, %v16 : tensor<4xf32>, tensor<4xf32>
  %v19 = loom.unary abs %v18 : tensor<4xf32>
  %v20 = loom.compare le %v19, %v17 : tensor<4xf32>, tensor<4xf32>
  %v21 = loom.cast %v20 : tensor<4xi1> to tensor<4xi32>
  %v22 = tensor.cast %v21 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v22) : (tensor<*xi32>) -> ()
  // unary sqrt
  %v23 = loom.unary sqrt %v2 : tensor<4xf32>
  %v24 = loom.constant dense<[0.5, 1.0, 1.5811388492584229, 3.0]> : tensor<4xf32>
  %v25 = loom.constant dense<[6.000000212225132e-06, 1.1000000085914508e-05, 1.681138928688597e-05, 3.099999958067201e-05]> : tensor<4xf32>
  %v26 = loom.binary sub %v23, %v24 : tensor<4xf32>, tensor<4xf32>
  %v27 = loom.unary abs %v26 : tensor<4xf32>
  %v28 = loom.compare le %v27, %v25 : tensor<4xf32>, tensor<4xf32>
  %v29 = loom.cast %v28 : tensor<4xi1> to tensor<4xi32>
  %v30 = tensor.cast %v29 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v30) : (tensor<*xi32>) -> ()
  // unary rsqrt
  %v31 = loom.unary rsqrt %v2 : tensor<4xf32>
  %v32 = loom.constant dense<[2.0, 1.0, 0.6324555277824402, 0.3333333432674408]> : tensor<4xf32>
  %v33 = loom.constant dense<[2.099999983329326e-05, 1.1000000085914508e-05, 7.32455509933061e-06, 4.333333436079556e-06]> : tensor<4xf32>
  %v34 = loom.binary sub %v31, %v32 : tensor<4xf32>, tensor<4xf32>
  %v35 = loom.unary abs %v34 : tensor<4xf32>
  %v36 = loom.compare le %v35, %v33 : tensor<4xf32>, tensor<4xf32>
  %v37 = loom.cast %v36 : tensor<4xi1> to tensor<4xi32>
  %v38 = tensor.cast %v37 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v38) : (tensor<*xi32>) -> ()
  // unary reciprocal
  %v39 = loom.unary reciprocal %v2 : tensor<4xf32>
  %v40 = tensor.cast %v39 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v40) : (tensor<*xf32>) -> ()
  // unary relu
  %v41 = loom.unary relu %v1 : tensor<8xf32>
  %v42 = tensor.cast %v41 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v42) : (tensor<*xf32>) -> ()
  // unary gelu
  %v43 = loom.unary gelu %v1 : tensor<8xf32>
  %v44 = loom.constant dense<[-0.0003988415119238198, -0.015524178743362427, -0.1542687714099884, 0.0, 0.3457312285900116, 1.3997893333435059, 2.48447585105896, 3.699601411819458]> : tensor<8xf32>
  %v45 = loom.constant dense<[1.0039883591161924e-06, 1.1552417618077016e-06, 2.5426877527934266e-06, 9.999999974752427e-07, 4.457312115846435e-06, 1.4997893231338821e-05, 2.5844758056337014e-05, 3.799601472564973e-05]> : tensor<8xf32>
  %v46 = loom.binary sub %v43, %v44 : tensor<8xf32>, tensor<8xf32>
  %v47 = loom.unary abs %v46 : tensor<8xf32>
  %v48 = loom.compare le %v47, %v45 : tensor<8xf32>, tensor<8xf32>
  %v49 = loom.cast %v48 : tensor<8xi1> to tensor<8xi32>
  %v50 = tensor.cast %v49 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v50) : (tensor<*xi32>) -> ()
  // unary gelu_tanh
  %v51 = loom.unary gelu_tanh %v1 : tensor<8xf32>
  %v52 = loom.constant dense<[-0.0002718120813369751, -0.015084221959114075, -0.1542859822511673, 0.0, 0.3457140326499939, 1.3995716571807861, 2.4849157333374023, 3.69972825050354]> : tensor<8xf32>
  %v53 = loom.constant dense<[1.0027181360783288e-06, 1.1508421948747127e-06, 2.542859874665737e-06, 9.999999974752427e-07, 4.4571402213477995e-06, 1.4995716810517479e-05, 2.584915819170419e-05, 3.79972807422746e-05]> : tensor<8xf32>
  %v54 = loom.binary sub %v51, %v52 : tensor<8xf32>, tensor<8xf32>
  %v55 = loom.unary abs %v54 : tensor<8xf32>
  %v56 = loom.compare le %v55, %v53 : tensor<8xf32>, tensor<8xf32>
  %v57 = loom.cast %v56 : tensor<8xi1> to tensor<8xi32>
  %v58 = tensor.cast %v57 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v58) : (tensor<*xi32>) -> ()
  // unary silu
  %v59 = loom.unary silu %v1 : tensor<8xf32>
  %v60 = loom.constant dense<[-0.0892699733376503, -0.189645454287529, -0.1887703388929367, 0.0, 0.3112296760082245, 1.2263617515563965, 2.310354471206665, 3.6107301712036133]> : tensor<8xf32>
  %v61 = loom.constant dense<[1.8926997427115566e-06, 2.896454589063069e-06, 2.8877034310426097e-06, 9.999999974752427e-07, 4.112296664970927e-06, 1.3263617802294903e-05, 2.410354500170797e-05, 3.710730015882291e-05]> : tensor<8xf32>
  %v62 = loom.binary sub %v59, %v60 : tensor<8xf32>, tensor<8xf32>
  %v63 = loom.unary abs %v62 : tensor<8xf32>
  %v64 = loom.compare le %v63, %v61 : tensor<8xf32>, tensor<8xf32>
  %v65 = loom.cast %v64 : tensor<8xi1> to tensor<8xi32>
  %v66 = tensor.cast %v65 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v66) : (tensor<*xi32>) -> ()
  // unary sigmoid
  %v67 = loom.unary sigmoid %v1 : tensor<8xf32>
  %v68 = loom.constant dense<[0.024127019569277763, 0.07585818320512772, 0.3775406777858734, 0.5, 0.622459352016449, 0.8175745010375977, 0.9241418242454529, 0.9758729934692383]> : tensor<8xf32>
  %v69 = loom.constant dense<[1.2412701835273765e-06, 1.758581788635638e-06, 4.7754069782968145e-06, 6.000000212225132e-06, 7.224593446153449e-06, 9.175744708045386e-06, 1.0241417840006761e-05, 1.0758730240922887e-05]> : tensor<8xf32>
  %v70 = loom.binary sub %v67, %v68 : tensor<8xf32>, tensor<8xf32>
  %v71 = loom.unary abs %v70 : tensor<8xf32>
  %v72 = loom.compare le %v71, %v69 : tensor<8xf32>, tensor<8xf32>
  %v73 = loom.cast %v72 : tensor<8xi1> to tensor<8xi32>
  %v74 = tensor.cast %v73 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v74) : (tensor<*xi32>) -> ()
  // unary tanh
  %v75 = loom.unary tanh %v1 : tensor<8xf32>
  %v76 = loom.constant dense<[-0.998778223991394, -0.9866142868995667, -0.46211719512939453, 0.0, 0.46211719512939453, 0.9051482081413269, 0.9866142868995667, 0.998778223991394]> : tensor<8xf32>
  %v77 = loom.constant dense<[1.098778193409089e-05, 1.0866142474696971e-05, 5.621172022074461e-06, 9.999999974752427e-07, 5.621172022074461e-06, 1.0051481694972608e-05, 1.0866142474696971e-05, 1.098778193409089e-05]> : tensor<8xf32>
  %v78 = loom.binary sub %v75, %v76 : tensor<8xf32>, tensor<8xf32>
  %v79 = loom.unary abs %v78 : tensor<8xf32>
  %v80 = loom.compare le %v79, %v77 : tensor<8xf32>, tensor<8xf32>
  %v81 = loom.cast %v80 : tensor<8xi1> to tensor<8xi32>
  %v82 = tensor.cast %v81 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v82) : (tensor<*xi32>) -> ()
  // unary erf
  %v83 = loom.unary erf %v1 : tensor<8xf32>
  %v84 = loom.constant dense<[-0.9999998211860657, -0.9995930194854736, -0.5204998850822449, 0.0, 0.5204998850822449, 0.9661051630973816, 0.9995930194854736, 0.9999998211860657]> : tensor<8xf32>
  %v85 = loom.constant dense<[1.0999998266925104e-05, 1.0995930097124074e-05, 6.204998953762697e-06, 9.999999974752427e-07, 6.204998953762697e-06, 1.0661051419447176e-05, 1.0995930097124074e-05, 1.0999998266925104e-05]> : tensor<8xf32>
  %v86 = loom.binary sub %v83, %v84 : tensor<8xf32>, tensor<8xf32>
  %v87 = loom.unary abs %v86 : tensor<8xf32>
  %v88 = loom.compare le %v87, %v85 : tensor<8xf32>, tensor<8xf32>
  %v89 = loom.cast %v88 : tensor<8xi1> to tensor<8xi32>
  %v90 = tensor.cast %v89 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v90) : (tensor<*xi32>) -> ()
  // unary sin
  %v91 = loom.unary sin %v1 : tensor<8xf32>
  %v92 = loom.constant dense<[0.5298361778259277, -0.5984721779823303, -0.4794255495071411, 0.0, 0.4794255495071411, 0.9974949955940247, 0.5984721779823303, -0.5298361778259277]> : tensor<8xf32>
  %v93 = loom.constant dense<[6.298361768131144e-06, 6.984721949265804e-06, 5.7942556850321125e-06, 9.999999974752427e-07, 5.7942556850321125e-06, 1.0974949873343576e-05, 6.984721949265804e-06, 6.298361768131144e-06]> : tensor<8xf32>
  %v94 = loom.binary sub %v91, %v92 : tensor<8xf32>, tensor<8xf32>
  %v95 = loom.unary abs %v94 : tensor<8xf32>
  %v96 = loom.compare le %v95, %v93 : tensor<8xf32>, tensor<8xf32>
  %v97 = loom.cast %v96 : tensor<8xi1> to tensor<8xi32>
  %v98 = tensor.cast %v97 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v98) : (tensor<*xi32>) -> ()
  // unary cos
  %v99 = loom.unary cos %v1 : tensor<8xf32>
  %v100 = loom.constant dense<[-0.8481000065803528, -0.8011435866355896, 0.8775825500488281, 1.0, 0.8775825500488281, 0.07073719799518585, -0.8011435866355896, -0.8481000065803528]> : tensor<8xf32>
  %v101 = loom.constant dense<[9.481000233790837e-06, 9.01143630471779e-06, 9.775825674296357e-06, 1.1000000085914508e-05, 9.775825674296357e-06, 1.707372007331287e-06, 9.01143630471779e-06, 9.481000233790837e-06]> : tensor<8xf32>
  %v102 = loom.binary sub %v99, %v100 : tensor<8xf32>, tensor<8xf32>
  %v103 = loom.unary abs %v102 : tensor<8xf32>
  %v104 = loom.compare le %v103, %v101 : tensor<8xf32>, tensor<8xf32>
  %v105 = loom.cast %v104 : tensor<8xi1> to tensor<8xi32>
  %v106 = tensor.cast %v105 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v106) : (tensor<*xi32>) -> ()
  // unary hard_sigmoid
  %v107 = loom.unary hard_sigmoid %v1 : tensor<8xf32>
  %v108 = tensor.cast %v107 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v108) : (tensor<*xf32>) -> ()
  // unary hard_swish
  %v109 = loom.unary hard_swish %v1 : tensor<8xf32>
  %v110 = tensor.cast %v109 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v110) : (tensor<*xf32>) -> ()
  // unary floor
  %v111 = loom.unary floor %v1 : tensor<8xf32>
  %v112 = tensor.cast %v111 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v112) : (tensor<*xf32>) -> ()
  // unary ceil
  %v113 = loom.unary ceil %v1 : tensor<8xf32>
  %v114 = tensor.cast %v113 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v114) : (tensor<*xf32>) -> ()
  // unary round
  %v115 = loom.unary round %v1 : tensor<8xf32>
  %v116 = tensor.cast %v115 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v116) : (tensor<*xf32>) -> ()
  // unary sign
  %v117 = loom.unary sign %v1 : tensor<8xf32>
  %v118 = tensor.cast %v117 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v118) : (tensor<*xf32>) -> ()
  // unary softplus
  %v119 = loom.unary softplus %v1 : tensor<8xf32>
  %v120 = loom.constant dense<[0.024422841146588326, 0.07888974249362946, 0.4740769863128662, 0.6931471824645996, 0.9740769863128662, 1.7014132738113403, 2.5788896083831787, 3.7244229316711426]> : tensor<8xf32>
  %v121 = loom.constant dense<[1.2442284287317307e-06, 1.7888974070956465e-06, 5.740769665862899e-06, 7.931471373012755e-06, 1.0740769539552275e-05, 1.8014132365351543e-05, 2.6788895411300473e-05, 3.824423038167879e-05]> : tensor<8xf32>
  %v122 = loom.binary sub %v119, %v120 : tensor<8xf32>, tensor<8xf32>
  %v123 = loom.unary abs %v122 : tensor<8xf32>
  %v124 = loom.compare le %v123, %v121 : tensor<8xf32>, tensor<8xf32>
  %v125 = loom.cast %v124 : tensor<8xi1> to tensor<8xi32>
  %v126 = tensor.cast %v125 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v126) : (tensor<*xi32>) -> ()
  // unary identity
  %v127 = loom.unary identity %v1 : tensor<8xf32>
  %v128 = tensor.cast %v127 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v128) : (tensor<*xf32>) -> ()
  // unary on NaN / inf / -0 / large: sign, relu, softplus, sigmoid, round
  %v129 = loom.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, -0.0, 100.0, -100.0]> : tensor<6xf32>
  %v130 = loom.unary sign %v129 : tensor<6xf32>
  %v131 = tensor.cast %v130 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v131) : (tensor<*xf32>) -> ()
  %v132 = loom.unary relu %v129 : tensor<6xf32>
  %v133 = tensor.cast %v132 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v133) : (tensor<*xf32>) -> ()
  %v134 = loom.unary softplus %v129 : tensor<6xf32>
  %v135 = tensor.cast %v134 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v135) : (tensor<*xf32>) -> ()
  %v136 = loom.unary sigmoid %v129 : tensor<6xf32>
  %v137 = tensor.cast %v136 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v137) : (tensor<*xf32>) -> ()
  %v138 = loom.unary silu %v129 : tensor<6xf32>
  %v139 = tensor.cast %v138 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v139) : (tensor<*xf32>) -> ()
  %v140 = loom.unary hard_swish %v129 : tensor<6xf32>
  %v141 = tensor.cast %v140 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v141) : (tensor<*xf32>) -> ()
  // unary on f64
  %v142 = loom.constant dense<[-3.7, -2.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7]> : tensor<8xf64>
  %v143 = loom.unary gelu %v142 : tensor<8xf64>
  %v144 = loom.constant dense<[-0.000398859013866415, -0.015524163314440398, -0.15426876936299344, 0.0, 0.34573123063700656, 1.399789198096713, 2.4844758366855597, 3.699601140986134]> : tensor<8xf64>
  %v145 = loom.constant dense<[1.0398859013866414e-14, 2.5524163314440395e-14, 1.6426876936299345e-13, 1.0e-14, 3.5573123063700655e-13, 1.4097891980967129e-12, 2.49447583668556e-12, 3.709601140986134e-12]> : tensor<8xf64>
  %v146 = loom.binary sub %v143, %v144 : tensor<8xf64>, tensor<8xf64>
  %v147 = loom.unary abs %v146 : tensor<8xf64>
  %v148 = loom.compare le %v147, %v145 : tensor<8xf64>, tensor<8xf64>
  %v149 = loom.cast %v148 : tensor<8xi1> to tensor<8xi32>
  %v150 = tensor.cast %v149 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v150) : (tensor<*xi32>) -> ()
  %v151 = loom.unary round %v142 : tensor<8xf64>
  %v152 = tensor.cast %v151 : tensor<8xf64> to tensor<*xf64>
  call @printMemrefF64(%v152) : (tensor<*xf64>) -> ()
  %v153 = loom.unary tanh %v142 : tensor<8xf64>
  %v154 = loom.constant dense<[-0.9987782412811311, -0.9866142981514303, -0.46211715726000974, 0.0, 0.46211715726000974, 0.9051482536448665, 0.9866142981514303, 0.9987782412811311]> : tensor<8xf64>
  %v155 = loom.constant dense<[1.008778241281131e-12, 9.966142981514302e-13, 4.721171572600097e-13, 1.0e-14, 4.721171572600097e-13, 9.151482536448666e-13, 9.966142981514302e-13, 1.008778241281131e-12]> : tensor<8xf64>
  %v156 = loom.binary sub %v153, %v154 : tensor<8xf64>, tensor<8xf64>
  %v157 = loom.unary abs %v156 : tensor<8xf64>
  %v158 = loom.compare le %v157, %v155 : tensor<8xf64>, tensor<8xf64>
  %v159 = loom.cast %v158 : tensor<8xi1> to tensor<8xi32>
  %v160 = tensor.cast %v159 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v160) : (tensor<*xi32>) -> ()
  // unary on f16
  %v161 = loom.constant dense<[-3.69921875, -2.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.69921875]> : tensor<8xf16>
  %v162 = loom.unary gelu %v161 : tensor<8xf16>
  %v163 = loom.constant dense<[-0.0, -0.0152587890625, -0.154296875, 0.0, 0.345703125, 1.3994140625, 2.484375, 3.69921875]> : tensor<8xf16>
  %v164 = loom.constant dense<[0.0010004043579101562, 0.0010156631469726562, 0.0011539459228515625, 0.0010004043579101562, 0.0013456344604492188, 0.002399444580078125, 0.0034847259521484375, 0.00469970703125]> : tensor<8xf16>
  %v165 = loom.binary sub %v162, %v163 : tensor<8xf16>, tensor<8xf16>
  %v166 = loom.unary abs %v165 : tensor<8xf16>
  %v167 = loom.compare le %v166, %v164 : tensor<8xf16>, tensor<8xf16>
  %v168 = loom.cast %v167 : tensor<8xi1> to tensor<8xi32>
  %v169 = tensor.cast %v168 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v169) : (tensor<*xi32>) -> ()
  %v170 = loom.unary round %v161 : tensor<8xf16>
  %v171 = loom.cast %v170 : tensor<8xf16> to tensor<8xf32>
  %v172 = tensor.cast %v171 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v172) : (tensor<*xf32>) -> ()
  %v173 = loom.unary tanh %v161 : tensor<8xf16>
  %v174 = loom.constant dense<[-0.99853515625, -0.98681640625, -0.462158203125, 0.0, 0.462158203125, 0.9052734375, 0.98681640625, 0.99853515625]> : tensor<8xf16>
  %v175 = loom.constant dense<[0.0019989013671875, 0.001987457275390625, 0.0014619827270507812, 0.0010004043579101562, 0.0014619827270507812, 0.0019054412841796875, 0.001987457275390625, 0.0019989013671875]> : tensor<8xf16>
  %v176 = loom.binary sub %v173, %v174 : tensor<8xf16>, tensor<8xf16>
  %v177 = loom.unary abs %v176 : tensor<8xf16>
  %v178 = loom.compare le %v177, %v175 : tensor<8xf16>, tensor<8xf16>
  %v179 = loom.cast %v178 : tensor<8xi1> to tensor<8xi32>
  %v180 = tensor.cast %v179 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v180) : (tensor<*xi32>) -> ()
  // unary neg/abs/sign on si32, ui8; logical_not on i1
  %v181 = loom.constant dense<[-2147483647, -3, 0, 5, 2147483647]> : tensor<5xsi32>
  %v182 = loom.unary neg %v181 : tensor<5xsi32>
  %v183 = loom.cast %v182 : tensor<5xsi32> to tensor<5xi32>
  %v184 = tensor.cast %v183 : tensor<5xi32> to tensor<*xi32>
  call @printMemrefI32(%v184) : (tensor<*xi32>) -> ()
  %v185 = loom.unary abs %v181 : tensor<5xsi32>
  %v186 = loom.cast %v185 : tensor<5xsi32> to tensor<5xi32>
  %v187 = tensor.cast %v186 : tensor<5xi32> to tensor<*xi32>
  call @printMemrefI32(%v187) : (tensor<*xi32>) -> ()
  %v188 = loom.unary sign %v181 : tensor<5xsi32>
  %v189 = loom.cast %v188 : tensor<5xsi32> to tensor<5xi32>
  %v190 = tensor.cast %v189 : tensor<5xi32> to tensor<*xi32>
  call @printMemrefI32(%v190) : (tensor<*xi32>) -> ()
  %v191 = loom.unary identity %v181 : tensor<5xsi32>
  %v192 = loom.cast %v191 : tensor<5xsi32> to tensor<5xi32>
  %v193 = tensor.cast %v192 : tensor<5xi32> to tensor<*xi32>
  call @printMemrefI32(%v193) : (tensor<*xi32>) -> ()
  %v194 = loom.constant dense<[0, 7, 200, 255]> : tensor<4xui8>
  %v195 = loom.unary neg %v194 : tensor<4xui8>
  %v196 = loom.cast %v195 : tensor<4xui8> to tensor<4xi32>
  %v197 = tensor.cast %v196 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v197) : (tensor<*xi32>) -> ()
  %v198 = loom.unary abs %v194 : tensor<4xui8>
  %v199 = loom.cast %v198 : tensor<4xui8> to tensor<4xi32>
  %v200 = tensor.cast %v199 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v200) : (tensor<*xi32>) -> ()
  %v201 = loom.unary sign %v194 : tensor<4xui8>
  %v202 = loom.cast %v201 : tensor<4xui8> to tensor<4xi32>
  %v203 = tensor.cast %v202 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v203) : (tensor<*xi32>) -> ()
  %v204 = loom.constant dense<[true, false, true]> : tensor<3xi1>
  %v205 = loom.unary logical_not %v204 : tensor<3xi1>
  %v206 = loom.cast %v205 : tensor<3xi1> to tensor<3xi32>
  %v207 = tensor.cast %v206 : tensor<3xi32> to tensor<*xi32>
  call @printMemrefI32(%v207) : (tensor<*xi32>) -> ()
  // binary float kinds: [2x3] with [3], and [2x1] with [1x3]
  %v208 = loom.constant dense<[[5.5, -5.5, 3.0], [-7.25, 0.0, 2.0]]> : tensor<2x3xf32>
  %v209 = loom.constant dense<[3.0, 3.0, -2.0]> : tensor<3xf32>
  %v210 = loom.constant dense<[[1.5], [-4.0]]> : tensor<2x1xf32>
  %v211 = loom.constant dense<[[2.0, -3.0, 0.5]]> : tensor<1x3xf32>
  %v212 = loom.binary add %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v213 = tensor.collapse_shape %v212 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v214 = tensor.cast %v213 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v214) : (tensor<*xf32>) -> ()
  %v215 = loom.binary add %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v216 = tensor.collapse_shape %v215 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v217 = tensor.cast %v216 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v217) : (tensor<*xf32>) -> ()
  %v218 = loom.binary sub %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v219 = tensor.collapse_shape %v218 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v220 = tensor.cast %v219 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v220) : (tensor<*xf32>) -> ()
  %v221 = loom.binary sub %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v222 = tensor.collapse_shape %v221 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v223 = tensor.cast %v222 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v223) : (tensor<*xf32>) -> ()
  %v224 = loom.binary mul %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v225 = tensor.collapse_shape %v224 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v226 = tensor.cast %v225 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v226) : (tensor<*xf32>) -> ()
  %v227 = loom.binary mul %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v228 = tensor.collapse_shape %v227 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v229 = tensor.cast %v228 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v229) : (tensor<*xf32>) -> ()
  %v230 = loom.binary div %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v231 = tensor.collapse_shape %v230 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v232 = tensor.cast %v231 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v232) : (tensor<*xf32>) -> ()
  %v233 = loom.binary div %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v234 = tensor.collapse_shape %v233 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v235 = tensor.cast %v234 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v235) : (tensor<*xf32>) -> ()
  %v236 = loom.binary max %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v237 = tensor.collapse_shape %v236 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v238 = tensor.cast %v237 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v238) : (tensor<*xf32>) -> ()
  %v239 = loom.binary max %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v240 = tensor.collapse_shape %v239 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v241 = tensor.cast %v240 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v241) : (tensor<*xf32>) -> ()
  %v242 = loom.binary min %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v243 = tensor.collapse_shape %v242 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v244 = tensor.cast %v243 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v244) : (tensor<*xf32>) -> ()
  %v245 = loom.binary min %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v246 = tensor.collapse_shape %v245 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v247 = tensor.cast %v246 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v247) : (tensor<*xf32>) -> ()
  %v248 = loom.binary mod %v208, %v209 : tensor<2x3xf32>, tensor<3xf32>
  %v249 = tensor.collapse_shape %v248 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v250 = tensor.cast %v249 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v250) : (tensor<*xf32>) -> ()
  %v251 = loom.binary mod %v210, %v211 : tensor<2x1xf32>, tensor<1x3xf32>
  %v252 = tensor.collapse_shape %v251 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v253 = tensor.cast %v252 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v253) : (tensor<*xf32>) -> ()
  // pow; mod with signed zeros; max/min propagate NaN
  %v254 = loom.constant dense<[2.0, 9.0, 0.5, 4.0]> : tensor<4xf32>
  %v255 = loom.constant dense<[3.0, 0.5, -2.0, 0.0]> : tensor<4xf32>
  %v256 = loom.binary pow %v254, %v255 : tensor<4xf32>, tensor<4xf32>
  %v257 = loom.constant dense<[8.0, 3.0, 4.0, 1.0]> : tensor<4xf32>
  %v258 = loom.constant dense<[8.099999831756577e-05, 3.099999958067201e-05, 4.099999932805076e-05, 1.1000000085914508e-05]> : tensor<4xf32>
  %v259 = loom.binary sub %v256, %v257 : tensor<4xf32>, tensor<4xf32>
  %v260 = loom.unary abs %v259 : tensor<4xf32>
  %v261 = loom.compare le %v260, %v258 : tensor<4xf32>, tensor<4xf32>
  %v262 = loom.cast %v261 : tensor<4xi1> to tensor<4xi32>
  %v263 = tensor.cast %v262 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v263) : (tensor<*xi32>) -> ()
  %v264 = loom.constant dense<[0.0, -0.0, 6.0, -6.0, 1.0, 0x7FC00000]> : tensor<6xf32>
  %v265 = loom.constant dense<[-3.0, 2.0, -3.0, 3.0, 0x7FC00000, 1.0]> : tensor<6xf32>
  %v266 = loom.binary mod %v264, %v265 : tensor<6xf32>, tensor<6xf32>
  %v267 = tensor.cast %v266 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v267) : (tensor<*xf32>) -> ()
  %v268 = loom.binary max %v264, %v265 : tensor<6xf32>, tensor<6xf32>
  %v269 = tensor.cast %v268 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v269) : (tensor<*xf32>) -> ()
  %v270 = loom.binary min %v264, %v265 : tensor<6xf32>, tensor<6xf32>
  %v271 = tensor.cast %v270 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v271) : (tensor<*xf32>) -> ()
  // binary integer kinds: si32 div truncates, mod takes the divisor's sign
  %v272 = loom.constant dense<[7, -7, 7, -7, 0, 2147483647]> : tensor<6xsi32>
  %v273 = loom.constant dense<[2, 2, -2, -2, 5, -1]> : tensor<6xsi32>
  %v274 = loom.binary add %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v275 = loom.cast %v274 : tensor<6xsi32> to tensor<6xi32>
  %v276 = tensor.cast %v275 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v276) : (tensor<*xi32>) -> ()
  %v277 = loom.binary sub %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v278 = loom.cast %v277 : tensor<6xsi32> to tensor<6xi32>
  %v279 = tensor.cast %v278 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v279) : (tensor<*xi32>) -> ()
  %v280 = loom.binary mul %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v281 = loom.cast %v280 : tensor<6xsi32> to tensor<6xi32>
  %v282 = tensor.cast %v281 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v282) : (tensor<*xi32>) -> ()
  %v283 = loom.binary div %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v284 = loom.cast %v283 : tensor<6xsi32> to tensor<6xi32>
  %v285 = tensor.cast %v284 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v285) : (tensor<*xi32>) -> ()
  %v286 = loom.binary max %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v287 = loom.cast %v286 : tensor<6xsi32> to tensor<6xi32>
  %v288 = tensor.cast %v287 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v288) : (tensor<*xi32>) -> ()
  %v289 = loom.binary min %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v290 = loom.cast %v289 : tensor<6xsi32> to tensor<6xi32>
  %v291 = tensor.cast %v290 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v291) : (tensor<*xi32>) -> ()
  %v292 = loom.binary mod %v272, %v273 : tensor<6xsi32>, tensor<6xsi32>
  %v293 = loom.cast %v292 : tensor<6xsi32> to tensor<6xi32>
  %v294 = tensor.cast %v293 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v294) : (tensor<*xi32>) -> ()
  // ui8 compares and divides unsigned
  %v295 = loom.constant dense<[200, 7, 255, 100]> : tensor<4xui8>
  %v296 = loom.constant dense<[100, 200, 16, 3]> : tensor<4xui8>
  %v297 = loom.binary div %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v298 = loom.cast %v297 : tensor<4xui8> to tensor<4xi32>
  %v299 = tensor.cast %v298 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v299) : (tensor<*xi32>) -> ()
  %v300 = loom.binary mod %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v301 = loom.cast %v300 : tensor<4xui8> to tensor<4xi32>
  %v302 = tensor.cast %v301 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v302) : (tensor<*xi32>) -> ()
  %v303 = loom.binary max %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v304 = loom.cast %v303 : tensor<4xui8> to tensor<4xi32>
  %v305 = tensor.cast %v304 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v305) : (tensor<*xi32>) -> ()
  %v306 = loom.binary min %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v307 = loom.cast %v306 : tensor<4xui8> to tensor<4xi32>
  %v308 = tensor.cast %v307 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v308) : (tensor<*xi32>) -> ()
  %v309 = loom.binary add %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v310 = loom.cast %v309 : tensor<4xui8> to tensor<4xi32>
  %v311 = tensor.cast %v310 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v311) : (tensor<*xi32>) -> ()
  %v312 = loom.binary sub %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v313 = loom.cast %v312 : tensor<4xui8> to tensor<4xi32>
  %v314 = tensor.cast %v313 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v314) : (tensor<*xi32>) -> ()
  // i64 with broadcasting
  %v315 = loom.constant dense<[[-9], [9]]> : tensor<2x1xi64>
  %v316 = loom.constant dense<[4, -4, 10000000000]> : tensor<3xi64>
  %v317 = loom.binary div %v315, %v316 : tensor<2x1xi64>, tensor<3xi64>
  %v318 = tensor.collapse_shape %v317 [[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
  %v319 = tensor.cast %v318 : tensor<6xi64> to tensor<*xi64>
  call @printMemrefI64(%v319) : (tensor<*xi64>) -> ()
  %v320 = loom.binary mod %v315, %v316 : tensor<2x1xi64>, tensor<3xi64>
  %v321 = tensor.collapse_shape %v320 [[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
  %v322 = tensor.cast %v321 : tensor<6xi64> to tensor<*xi64>
  call @printMemrefI64(%v322) : (tensor<*xi64>) -> ()
  %v323 = loom.binary mul %v315, %v316 : tensor<2x1xi64>, tensor<3xi64>
  %v324 = tensor.collapse_shape %v323 [[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
  %v325 = tensor.cast %v324 : tensor<6xi64> to tensor<*xi64>
  call @printMemrefI64(%v325) : (tensor<*xi64>) -> ()
  // logical kinds (and add) on i1
  %v326 = loom.constant dense<[true, true, false, false]> : tensor<4xi1>
  %v327 = loom.constant dense<[true, false, true, false]> : tensor<4xi1>
  %v328 = loom.binary logical_and %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v329 = loom.cast %v328 : tensor<4xi1> to tensor<4xi32>
  %v330 = tensor.cast %v329 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v330) : (tensor<*xi32>) -> ()
  %v331 = loom.binary logical_or %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v332 = loom.cast %v331 : tensor<4xi1> to tensor<4xi32>
  %v333 = tensor.cast %v332 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v333) : (tensor<*xi32>) -> ()
  %v334 = loom.binary logical_xor %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v335 = loom.cast %v334 : tensor<4xi1> to tensor<4xi32>
  %v336 = tensor.cast %v335 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v336) : (tensor<*xi32>) -> ()
  %v337 = loom.binary add %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v338 = loom.cast %v337 : tensor<4xi1> to tensor<4xi32>
  %v339 = tensor.cast %v338 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v339) : (tensor<*xi32>) -> ()
  %v340 = loom.binary max %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v341 = loom.cast %v340 : tensor<4xi1> to tensor<4xi32>
  %v342 = tensor.cast %v341 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v342) : (tensor<*xi32>) -> ()
  %v343 = loom.binary min %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v344 = loom.cast %v343 : tensor<4xi1> to tensor<4xi32>
  %v345 = tensor.cast %v344 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v345) : (tensor<*xi32>) -> ()
  // compare: floats with NaN (ordered, ne unordered), broadcast
  %v346 = loom.constant dense<[[1.0, 0x7FC00000, 3.0], [2.0, 2.0, -1.0]]> : tensor<2x3xf32>
  %v347 = loom.constant dense<[2.0, 0x7FC00000, 3.0]> : tensor<3xf32>
  %v348 = loom.compare eq %v346, %v347 : tensor<2x3xf32>, tensor<3xf32>
  %v349 = loom.cast %v348 : tensor<2x3xi1> to tensor<2x3xi32>
  %v350 = tensor.collapse_shape %v349 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v351 = tensor.cast %v350 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v351) : (tensor<*xi32>) -> ()
  %v352 = loom.compare ne %v346, %v347 : tensor<2x3xf32>, tensor<3xf32>
  %v353 = loom.cast %v352 : tensor<2x3xi1> to tensor<2x3xi32>
  %v354 = tensor.collapse_shape %v353 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v355 = tensor.cast %v354 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v355) : (tensor<*xi32>) -> ()
  %v356 = loom.compare lt %v346, %v347 : tensor<2x3xf32>, tensor<3xf32>
  %v357 = loom.cast %v356 : tensor<2x3xi1> to tensor<2x3xi32>
  %v358 = tensor.collapse_shape %v357 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v359 = tensor.cast %v358 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v359) : (tensor<*xi32>) -> ()
  %v360 = loom.compare le %v346, %v347 : tensor<2x3xf32>, tensor<3xf32>
  %v361 = loom.cast %v360 : tensor<2x3xi1> to tensor<2x3xi32>
  %v362 = tensor.collapse_shape %v361 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v363 = tensor.cast %v362 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v363) : (tensor<*xi32>) -> ()
  %v364 = loom.compare gt %v346, %v347 : tensor<2x3xf32>, tensor<3xf32>
  %v365 = loom.cast %v364 : tensor<2x3xi1> to tensor<2x3xi32>
  %v366 = tensor.collapse_shape %v365 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v367 = tensor.cast %v366 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v367) : (tensor<*xi32>) -> ()
  %v368 = loom.compare ge %v346, %v347 : tensor<2x3xf32>, tensor<3xf32>
  %v369 = loom.cast %v368 : tensor<2x3xi1> to tensor<2x3xi32>
  %v370 = tensor.collapse_shape %v369 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v371 = tensor.cast %v370 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v371) : (tensor<*xi32>) -> ()
  // compare: si8 signed vs ui8 unsigned
  %v372 = loom.constant dense<[-100, 5, 127, -1]> : tensor<4xsi8>
  %v373 = loom.constant dense<[100, 5, -128, 0]> : tensor<4xsi8>
  %v374 = loom.compare eq %v372, %v373 : tensor<4xsi8>, tensor<4xsi8>
  %v375 = loom.cast %v374 : tensor<4xi1> to tensor<4xi32>
  %v376 = tensor.cast %v375 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v376) : (tensor<*xi32>) -> ()
  %v377 = loom.compare ne %v372, %v373 : tensor<4xsi8>, tensor<4xsi8>
  %v378 = loom.cast %v377 : tensor<4xi1> to tensor<4xi32>
  %v379 = tensor.cast %v378 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v379) : (tensor<*xi32>) -> ()
  %v380 = loom.compare lt %v372, %v373 : tensor<4xsi8>, tensor<4xsi8>
  %v381 = loom.cast %v380 : tensor<4xi1> to tensor<4xi32>
  %v382 = tensor.cast %v381 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v382) : (tensor<*xi32>) -> ()
  %v383 = loom.compare le %v372, %v373 : tensor<4xsi8>, tensor<4xsi8>
  %v384 = loom.cast %v383 : tensor<4xi1> to tensor<4xi32>
  %v385 = tensor.cast %v384 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v385) : (tensor<*xi32>) -> ()
  %v386 = loom.compare gt %v372, %v373 : tensor<4xsi8>, tensor<4xsi8>
  %v387 = loom.cast %v386 : tensor<4xi1> to tensor<4xi32>
  %v388 = tensor.cast %v387 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v388) : (tensor<*xi32>) -> ()
  %v389 = loom.compare ge %v372, %v373 : tensor<4xsi8>, tensor<4xsi8>
  %v390 = loom.cast %v389 : tensor<4xi1> to tensor<4xi32>
  %v391 = tensor.cast %v390 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v391) : (tensor<*xi32>) -> ()
  %v392 = loom.compare eq %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v393 = loom.cast %v392 : tensor<4xi1> to tensor<4xi32>
  %v394 = tensor.cast %v393 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v394) : (tensor<*xi32>) -> ()
  %v395 = loom.compare ne %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v396 = loom.cast %v395 : tensor<4xi1> to tensor<4xi32>
  %v397 = tensor.cast %v396 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v397) : (tensor<*xi32>) -> ()
  %v398 = loom.compare lt %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v399 = loom.cast %v398 : tensor<4xi1> to tensor<4xi32>
  %v400 = tensor.cast %v399 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v400) : (tensor<*xi32>) -> ()
  %v401 = loom.compare le %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v402 = loom.cast %v401 : tensor<4xi1> to tensor<4xi32>
  %v403 = tensor.cast %v402 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v403) : (tensor<*xi32>) -> ()
  %v404 = loom.compare gt %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v405 = loom.cast %v404 : tensor<4xi1> to tensor<4xi32>
  %v406 = tensor.cast %v405 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v406) : (tensor<*xi32>) -> ()
  %v407 = loom.compare ge %v295, %v296 : tensor<4xui8>, tensor<4xui8>
  %v408 = loom.cast %v407 : tensor<4xi1> to tensor<4xi32>
  %v409 = tensor.cast %v408 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v409) : (tensor<*xi32>) -> ()
  %v410 = loom.compare lt %v326, %v327 : tensor<4xi1>, tensor<4xi1>
  %v411 = loom.cast %v410 : tensor<4xi1> to tensor<4xi32>
  %v412 = tensor.cast %v411 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v412) : (tensor<*xi32>) -> ()
  // where: condition [2x1], on_true [3], on_false scalar
  %v413 = loom.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %v414 = loom.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %v415 = loom.constant dense<-1.0> : tensor<f32>
  %v416 = loom.where %v413, %v414, %v415 : tensor<2x1xi1>, tensor<3xf32>, tensor<f32>
  %v417 = tensor.collapse_shape %v416 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v418 = tensor.cast %v417 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v418) : (tensor<*xf32>) -> ()
  %v419 = loom.constant dense<[true, false, true]> : tensor<3xi1>
  %v420 = loom.constant dense<[[10], [20]]> : tensor<2x1xsi32>
  %v421 = loom.constant dense<[[-1, -2, -3]]> : tensor<1x3xsi32>
  %v422 = loom.where %v419, %v420, %v421 : tensor<3xi1>, tensor<2x1xsi32>, tensor<1x3xsi32>
  %v423 = loom.cast %v422 : tensor<2x3xsi32> to tensor<2x3xi32>
  %v424 = tensor.collapse_shape %v423 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v425 = tensor.cast %v424 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v425) : (tensor<*xi32>) -> ()
  // clamp: floats (NaN stays), both / one bound
  %v426 = loom.constant dense<[-8.0, -1.0, 0.0, 3.0, 6.5, 0x7FC00000]> : tensor<6xf32>
  %v427 = loom.clamp %v426 {min = 0.0 : f64, max = 6.0 : f64} : tensor<6xf32>
  %v428 = tensor.cast %v427 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v428) : (tensor<*xf32>) -> ()
  %v429 = loom.clamp %v426 {min = -1.5 : f64} : tensor<6xf32>
  %v430 = tensor.cast %v429 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v430) : (tensor<*xf32>) -> ()
  %v431 = loom.clamp %v426 {max = 2.5 : f64} : tensor<6xf32>
  %v432 = tensor.cast %v431 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v432) : (tensor<*xf32>) -> ()
  // clamp: integers with fractional and out-of-range bounds, as numpy
  %v433 = loom.constant dense<[-10, -3, -2, 0, 1, 6, 7, 100]> : tensor<8xsi32>
  %v434 = loom.clamp %v433 {min = -2.5 : f64, max = 6.9 : f64} : tensor<8xsi32>
  %v435 = loom.cast %v434 : tensor<8xsi32> to tensor<8xi32>
  %v436 = tensor.cast %v435 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v436) : (tensor<*xi32>) -> ()
  %v437 = loom.clamp %v433 {min = 0.5 : f64} : tensor<8xsi32>
  %v438 = loom.cast %v437 : tensor<8xsi32> to tensor<8xi32>
  %v439 = tensor.cast %v438 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v439) : (tensor<*xi32>) -> ()
  %v440 = loom.clamp %v433 {max = -2.5 : f64} : tensor<8xsi32>
  %v441 = loom.cast %v440 : tensor<8xsi32> to tensor<8xi32>
  %v442 = tensor.cast %v441 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v442) : (tensor<*xi32>) -> ()
  %v443 = loom.clamp %v295 {min = 10.0 : f64, max = 150.0 : f64} : tensor<4xui8>
  %v444 = loom.cast %v443 : tensor<4xui8> to tensor<4xi32>
  %v445 = tensor.cast %v444 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v445) : (tensor<*xi32>) -> ()
  %v446 = loom.clamp %v295 {min = -5.0 : f64, max = 300.0 : f64} : tensor<4xui8>
  %v447 = loom.cast %v446 : tensor<4xui8> to tensor<4xi32>
  %v448 = tensor.cast %v447 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v448) : (tensor<*xi32>) -> ()
  // cast: float -> int truncates toward zero; narrow ints wrap as numpy
  %v449 = loom.constant dense<[-2.700000047683716, -0.5, 0.0, 0.8999999761581421, 2.700000047683716, 130.0, -1.0, 255.0]> : tensor<8xf32>
  %v450 = loom.cast %v449 : tensor<8xf32> to tensor<8xsi32>
  %v451 = loom.cast %v450 : tensor<8xsi32> to tensor<8xi32>
  %v452 = tensor.cast %v451 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v452) : (tensor<*xi32>) -> ()
  %v453 = loom.cast %v449 : tensor<8xf32> to tensor<8xi64>
  %v454 = tensor.cast %v453 : tensor<8xi64> to tensor<*xi64>
  call @printMemrefI64(%v454) : (tensor<*xi64>) -> ()
  %v455 = loom.cast %v449 : tensor<8xf32> to tensor<8xsi8>
  %v456 = loom.cast %v455 : tensor<8xsi8> to tensor<8xi32>
  %v457 = tensor.cast %v456 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v457) : (tensor<*xi32>) -> ()
  %v458 = loom.cast %v449 : tensor<8xf32> to tensor<8xui8>
  %v459 = loom.cast %v458 : tensor<8xui8> to tensor<8xi32>
  %v460 = tensor.cast %v459 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v460) : (tensor<*xi32>) -> ()
  %v461 = loom.cast %v449 : tensor<8xf32> to tensor<8xi1>
  %v462 = loom.cast %v461 : tensor<8xi1> to tensor<8xi32>
  %v463 = tensor.cast %v462 : tensor<8xi32> to tensor<*xi32>
  call @printMemrefI32(%v463) : (tensor<*xi32>) -> ()
  %v464 = loom.cast %v449 : tensor<8xf32> to tensor<8xf64>
  %v465 = tensor.cast %v464 : tensor<8xf64> to tensor<*xf64>
  call @printMemrefF64(%v465) : (tensor<*xf64>) -> ()
  %v466 = loom.cast %v449 : tensor<8xf32> to tensor<8xf16>
  %v467 = loom.cast %v466 : tensor<8xf16> to tensor<8xf32>
  %v468 = tensor.cast %v467 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v468) : (tensor<*xf32>) -> ()
  %v469 = loom.cast %v449 : tensor<8xf32> to tensor<8xbf16>
  %v470 = loom.cast %v469 : tensor<8xbf16> to tensor<8xf32>
  %v471 = tensor.cast %v470 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v471) : (tensor<*xf32>) -> ()
  %v472 = loom.constant dense<[0x7FC00000, -0.0, 1.0000000031710769e-30]> : tensor<3xf32>
  %v473 = loom.cast %v472 : tensor<3xf32> to tensor<3xi1>
  %v474 = loom.cast %v473 : tensor<3xi1> to tensor<3xi32>
  %v475 = tensor.cast %v474 : tensor<3xi32> to tensor<*xi32>
  call @printMemrefI32(%v475) : (tensor<*xi32>) -> ()
  // cast: int -> int extends by the source's signedness, truncates
  %v476 = loom.cast %v295 : tensor<4xui8> to tensor<4xsi32>
  %v477 = loom.cast %v476 : tensor<4xsi32> to tensor<4xi32>
  %v478 = tensor.cast %v477 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v478) : (tensor<*xi32>) -> ()
  %v479 = loom.cast %v295 : tensor<4xui8> to tensor<4xi64>
  %v480 = tensor.cast %v479 : tensor<4xi64> to tensor<*xi64>
  call @printMemrefI64(%v480) : (tensor<*xi64>) -> ()
  %v481 = loom.cast %v295 : tensor<4xui8> to tensor<4xsi8>
  %v482 = loom.cast %v481 : tensor<4xsi8> to tensor<4xi32>
  %v483 = tensor.cast %v482 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v483) : (tensor<*xi32>) -> ()
  %v484 = loom.cast %v372 : tensor<4xsi8> to tensor<4xsi32>
  %v485 = loom.cast %v484 : tensor<4xsi32> to tensor<4xi32>
  %v486 = tensor.cast %v485 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v486) : (tensor<*xi32>) -> ()
  %v487 = loom.cast %v372 : tensor<4xsi8> to tensor<4xui8>
  %v488 = loom.cast %v487 : tensor<4xui8> to tensor<4xi32>
  %v489 = tensor.cast %v488 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v489) : (tensor<*xi32>) -> ()
  %v490 = loom.cast %v372 : tensor<4xsi8> to tensor<4xi1>
  %v491 = loom.cast %v490 : tensor<4xi1> to tensor<4xi32>
  %v492 = tensor.cast %v491 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v492) : (tensor<*xi32>) -> ()
  %v493 = loom.constant dense<[300, -129, 65535, -1]> : tensor<4xsi32>
  %v494 = loom.cast %v493 : tensor<4xsi32> to tensor<4xsi8>
  %v495 = loom.cast %v494 : tensor<4xsi8> to tensor<4xi32>
  %v496 = tensor.cast %v495 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v496) : (tensor<*xi32>) -> ()
  %v497 = loom.cast %v493 : tensor<4xsi32> to tensor<4xui8>
  %v498 = loom.cast %v497 : tensor<4xui8> to tensor<4xi32>
  %v499 = tensor.cast %v498 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v499) : (tensor<*xi32>) -> ()
  %v500 = loom.cast %v493 : tensor<4xsi32> to tensor<4xui16>
  %v501 = loom.cast %v500 : tensor<4xui16> to tensor<4xi32>
  %v502 = tensor.cast %v501 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v502) : (tensor<*xi32>) -> ()
  // cast: int -> float by signedness; i1 <-> numbers
  %v503 = loom.cast %v295 : tensor<4xui8> to tensor<4xf32>
  %v504 = tensor.cast %v503 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v504) : (tensor<*xf32>) -> ()
  %v505 = loom.cast %v372 : tensor<4xsi8> to tensor<4xf32>
  %v506 = tensor.cast %v505 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v506) : (tensor<*xf32>) -> ()
  %v507 = loom.cast %v326 : tensor<4xi1> to tensor<4xf32>
  %v508 = tensor.cast %v507 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v508) : (tensor<*xf32>) -> ()
  %v509 = loom.cast %v326 : tensor<4xi1> to tensor<4xsi32>
  %v510 = loom.cast %v509 : tensor<4xsi32> to tensor<4xi32>
  %v511 = tensor.cast %v510 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v511) : (tensor<*xi32>) -> ()
  %v512 = loom.cast %v326 : tensor<4xi1> to tensor<4xui8>
  %v513 = loom.cast %v512 : tensor<4xui8> to tensor<4xi32>
  %v514 = tensor.cast %v513 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v514) : (tensor<*xi32>) -> ()
  %v515 = loom.constant dense<[16777217, -16777219, 123456789]> : tensor<3xi64>
  %v516 = loom.cast %v515 : tensor<3xi64> to tensor<3xf32>
  %v517 = tensor.cast %v516 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%v517) : (tensor<*xf32>) -> ()
  %v518 = loom.cast %v515 : tensor<3xi64> to tensor<3xbf16>
  %v519 = loom.cast %v518 : tensor<3xbf16> to tensor<3xf32>
  %v520 = tensor.cast %v519 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%v520) : (tensor<*xf32>) -> ()
  %v521 = loom.cast %v515 : tensor<3xi64> to tensor<3xf64>
  %v522 = tensor.cast %v521 : tensor<3xf64> to tensor<*xf64>
  call @printMemrefF64(%v522) : (tensor<*xf64>) -> ()
  // cast: f64 -> f32 / bf16, f16 -> f32
  %v523 = loom.constant dense<[1.0000001192092896, 3.14159265358979, -1.0e-08, 65504.0]> : tensor<4xf64>
  %v524 = loom.cast %v523 : tensor<4xf64> to tensor<4xf32>
  %v525 = tensor.cast %v524 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v525) : (tensor<*xf32>) -> ()
  %v526 = loom.cast %v523 : tensor<4xf64> to tensor<4xbf16>
  %v527 = loom.cast %v526 : tensor<4xbf16> to tensor<4xf32>
  %v528 = tensor.cast %v527 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v528) : (tensor<*xf32>) -> ()
  %v529 = loom.constant dense<[0.0999755859375, -2.5, 65504.0]> : tensor<3xf16>
  %v530 = loom.cast %v529 : tensor<3xf16> to tensor<3xf32>
  %v531 = tensor.cast %v530 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%v531) : (tensor<*xf32>) -> ()
  // constant: ui8 values above 127, splat, si64
  %v532 = loom.constant dense<[0, 128, 255]> : tensor<3xui8>
  %v533 = loom.cast %v532 : tensor<3xui8> to tensor<3xi32>
  %v534 = tensor.cast %v533 : tensor<3xi32> to tensor<*xi32>
  call @printMemrefI32(%v534) : (tensor<*xi32>) -> ()
  %v535 = loom.constant dense<7> : tensor<2x2xsi64>
  %v536 = loom.cast %v535 : tensor<2x2xsi64> to tensor<2x2xi64>
  %v537 = tensor.collapse_shape %v536 [[0, 1]] : tensor<2x2xi64> into tensor<4xi64>
  %v538 = tensor.cast %v537 : tensor<4xi64> to tensor<*xi64>
  call @printMemrefI64(%v538) : (tensor<*xi64>) -> ()
  %v539 = loom.constant dense<2.5> : tensor<3xf32>
  %v540 = tensor.cast %v539 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%v540) : (tensor<*xf32>) -> ()
  return
}

// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3.7, 2.5, 0.5, -0, -0.5, -1.5, -2.5, -3.7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3.7, 2.5, 0.5, 0, 0.5, 1.5, 2.5, 3.7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [4, 1, 0.4, 0.111111]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 0, 0, 0.5, 1.5, 2.5, 3.7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0.0833333, 0.416667, 0.5, 0.583333, 0.75, 0.916667, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-0, -0.208333, -0.208333, 0, 0.291667, 1.125, 2.29167, 3.7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-4, -3, -1, 0, 0, 1, 2, 3]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-3, -2, {{-?}}0, {{-?}}0, 1, 2, 3, 4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-4, -2, -0, 0, 0, 2, 2, 4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-1, -1, -1, 0, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-3.7, -2.5, -0.5, 0, 0.5, 1.5, 2.5, 3.7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [{{-?nan}}, 1, -1, 0, 1, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [{{-?nan}}, inf, 0, 0, 100, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [{{-?nan}}, inf, 0, 0.693147, 100, 3.78351e-44]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [{{-?nan}}, 1, 0, 0.5, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [{{-?nan}}, inf, {{-?nan}}, -0, 100, -0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [{{-?nan}}, inf, {{-?nan}}, -0, 100, -0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-4, -2, -0, 0, 0, 2, 2, 4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-4, -2, -0, 0, 0, 2, 2, 4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [5] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2147483647, 3, 0, -5, -2147483647]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [5] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2147483647, 3, 0, 5, 2147483647]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [5] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-1, -1, 0, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [5] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2147483647, -3, 0, 5, 2147483647]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 249, 56, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 7, 200, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [8.5, -2.5, 1, -4.25, 3, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3.5, -1.5, 2, -2, -7, -3.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2.5, -8.5, 5, -10.25, -3, 4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-0.5, 4.5, 1, -6, -1, -4.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [16.5, -16.5, -6, -21.75, 0, -4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3, -4.5, 0.75, -8, 12, -2]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.83333, -1.83333, -1.5, -2.41667, 0, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0.75, -0.5, 3, -2, 1.33333, -8]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [5.5, 3, 3, 3, 3, 2]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2, 1.5, 1.5, 2, -3, 0.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3, -5.5, -2, -7.25, 0, -2]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.5, -3, 0.5, -4, -4, -4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2.5, 0.5, -1, 1.75, 0, -0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.5, -1.5, 0, 0, -1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-0, 0, -0, 0, {{-?nan}}, {{-?nan}}]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 2, 6, 3, {{-?nan}}, {{-?nan}}]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-3, -0, -3, -6, {{-?nan}}, {{-?nan}}]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [9, -5, 5, -9, 5, 2147483646]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [5, -9, 9, -5, -5, -2147483648]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [14, -14, -14, 14, 0, -2147483647]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3, -3, -3, 3, 0, -2147483647]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [7, 2, 7, -2, 5, 2147483647]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2, -7, -2, -7, 0, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, -1, -1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2, 0, 15, 33]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 7, 15, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [200, 200, 255, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [100, 7, 16, 3]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [44, 207, 15, 103]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [100, 63, 239, 97]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2, 2, 0, 2, -2, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3, -1, 9999999991, 1, -3, 9]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-36, 36, -90000000000, 36, -36, 90000000000]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 1, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 0, 0, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 0, 0, 0, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 1, 1, 0, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 0, 0, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 1, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 0, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 0, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 1, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 2, 3, -1, -1, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [10, -2, 10, 20, -2, 20]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 0, 3, 6, {{-?nan}}]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-1.5, -1, 0, 3, 6.5, {{-?nan}}]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-8, -1, 0, 2.5, 2.5, {{-?nan}}]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2, -2, -2, 0, 1, 6, 6, 6]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 0, 0, 1, 6, 7, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-10, -3, -2, -2, -2, -2, -2, -2]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [150, 10, 150, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [200, 7, 255, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2, 0, 0, 0, 2, 130, -1, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2, 0, 0, 0, 2, 130, -1, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2, 0, 0, 0, 2, -126, -1, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [254, 0, 0, 0, 2, 130, 255, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 0, 1, 1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2.7, -0.5, 0, 0.9, 2.7, 130, -1, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2.69922, -0.5, 0, 0.899902, 2.69922, 130, -1, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-2.70312, -0.5, 0, 0.898438, 2.70312, 130, -1, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [200, 7, 255, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [200, 7, 255, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-56, 7, -1, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-100, 5, 127, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [156, 5, 127, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 1, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [44, 127, -1, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [44, 127, 255, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [300, 65407, 65535, 65535]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [200, 7, 255, 100]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-100, 5, 127, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 0, 0]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.67772e+07, -1.67772e+07, 1.23457e+08]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.67772e+07, -1.67772e+07, 1.23208e+08]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.67772e+07, -1.67772e+07, 1.23457e+08]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 3.14159, -1e-08, 65504]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 3.14062, -1.00117e-08, 65536]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0.0999756, -2.5, 65504]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 128, 255]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [7, 7, 7, 7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2.5, 2.5, 2.5]
